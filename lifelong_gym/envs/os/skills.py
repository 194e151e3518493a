"""The OS environment's skill taxonomy: the benchmark's 29 commands, their groups and
prerequisites."""

from __future__ import annotations

from lifelong_gym.skill_tables import SkillTaxonomy

#: Files come before the text tools that read them, permissions after, and user and group
#: accounts last. A command builds on what makes its object (a file to copy, a user to
#: modify).
_GROUPS = (
    ("shell", ("echo", "exit", "sleep")),
    ("files", ("cat", "cd", "cp", "find", "ln", "ls", "mkdir", "mv", "rm", "tee", "touch")),
    ("text", ("awk", "grep", "sed", "vi", "wc")),
    ("permissions", ("chmod", "chown", "chgrp")),
    ("accounts", ("useradd", "usermod", "chage", "chsh", "addgroup", "groupadd", "gpasswd")),
)
TAXONOMY = SkillTaxonomy(
    skills=tuple(sorted(skill for _, skills in _GROUPS for skill in skills)),
    groups=_GROUPS,
    prerequisites={
        "tee": ("echo",),
        "cd": ("mkdir",),
        "cp": ("touch",),
        "mv": ("touch",),
        "rm": ("touch",),
        "ln": ("touch",),
        "find": ("ls",),
        "grep": ("cat",),
        "wc": ("cat",),
        "awk": ("grep",),
        "sed": ("grep",),
        "chmod": ("touch",),
        "chown": ("touch",),
        "chgrp": ("chown",),
        "usermod": ("useradd",),
        "chage": ("useradd",),
        "chsh": ("useradd",),
        "gpasswd": ("groupadd", "useradd"),
    },
)
#: the commands in alphabetical order, the order the generator covers them in
SKILLS = TAXONOMY.skills
