"""Start a restricted agent's bash: it and all it starts execute only the agent's programs.

Run by the toolset's python3 in place of the agent's shell (`exec`, after the task's setup),
with the bash to start as arguments; the standard library only. It asks Landlock (Linux
5.13 and later) to let this process and all its descendants execute only the files listed
in MANIFEST (their toolset copies) and the toolset's loader, forbids it to gain privileges,
and executes the bash. Landlock rules hold files, not names, and the toolset is read-only: a
copy, link or rewrite the agent makes is another file, or cannot be made; and no process of
the tree can lift the restriction. Exits 1 with one line where the kernel has no Landlock.
"""

import ctypes
import os
import sys

ROOT = "/.lgj"
MANIFEST = ROOT + "/agent-programs"
LOADER = ROOT + "/ld.so"
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # x86_64 system call numbers
ACCESS_FS_EXECUTE = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def refuse(what: str) -> None:
    """Say why the shell cannot be restricted, and stop."""
    reason = os.strerror(ctypes.get_errno())
    sys.stderr.write(f"the agent's shell cannot be restricted: {what} ({reason})\n")
    sys.exit(1)


def main() -> None:
    """Restrict execution to the agent's programs, then execute `sys.argv[1:]`."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    handled = RulesetAttr(ACCESS_FS_EXECUTE)
    size = ctypes.c_size_t(ctypes.sizeof(handled))
    ruleset = libc.syscall(CREATE_RULESET, ctypes.byref(handled), size, 0)
    if ruleset < 0:
        refuse("this kernel offers no Landlock (Linux 5.13 or later, with landlock in its lsm=)")
    with open(MANIFEST) as manifest:
        paths = [LOADER] + [ROOT + line.strip() for line in manifest if line.strip()]
    for path in paths:
        rule = PathBeneathAttr(ACCESS_FS_EXECUTE, os.open(path, os.O_PATH))
        if libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            refuse(f"Landlock refused a rule for {path}")
        os.close(rule.parent_fd)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        refuse("no_new_privs could not be set")
    if libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
        refuse("Landlock refused to restrict the shell")
    os.close(ruleset)
    os.execv(sys.argv[1], sys.argv[1:])


main()
