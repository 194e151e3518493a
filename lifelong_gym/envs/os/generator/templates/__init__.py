"""Task templates for the OS generator: each draws one task from a random generator.

A template returns the instruction, the initialization script, the reference solution
(whose commands are the task's skills), and an evaluation script that exits 0 only when
the task is done; a question template returns the answer the solution prints instead.
Values are drawn from `random.Random`, so a seed fixes every task.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from shlex import quote

USERS = "alice bob carol dave erin frank grace heidi ivan judy mallory nina oscar peggy rupert sybil trent victor walter yara".split()  # noqa: E501
GROUPS = "devs ops qa audit legal design sales analytics research support finance media".split()
PROJECTS = "atlas borealis cobalt delta ember falcon granite harbor iris juniper kestrel lumen mosaic nimbus orion".split()  # noqa: E501
WORDS = "apple river stone cloud ember maple quartz signal copper lantern meadow orbit pixel harbor velvet".split()  # noqa: E501
SHELLS = ("/bin/sh", "/bin/bash", "/usr/sbin/nologin", "/bin/dash")


@dataclass(frozen=True)
class Draft:
    """One generated task before it gets its index."""

    instruction: str
    init: str
    solution: str
    evaluation: str


@dataclass(frozen=True)
class Question:
    """One generated question task: the solution prints `answer`, which the agent must give."""

    instruction: str
    init: str
    solution: str
    answer: str


Template = Callable[[random.Random], Draft | Question]
TEMPLATES: dict[str, tuple[tuple[str, ...], Template]] = {}  # tasks that ask for a change
QUESTIONS: dict[str, tuple[tuple[str, ...], Template]] = {}  # tasks that ask a question


def _registrar(
    registry: dict[str, tuple[tuple[str, ...], Template]],
) -> Callable[..., Callable[[Template], Template]]:
    def register_under(*skills: str) -> Callable[[Template], Template]:
        def register(function: Template) -> Template:
            registry[function.__name__] = (skills, function)
            return function

        return register

    return register_under


#: `@template(skills)` registers a change template under the skills its solution uses
template = _registrar(TEMPLATES)
#: `@question(skills)` registers a question template under the skills its solution uses
question = _registrar(QUESTIONS)


def random_lines(rng: random.Random, count: int) -> list[str]:
    return [f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randint(1, 999)}" for _ in range(count)]


def write_lines(path: str, lines: list[str]) -> str:
    """Init text that writes `lines` to `path` (creating its directory)."""
    folder = path.rsplit("/", 1)[0] or "/"
    return f"mkdir -p {quote(folder)}\nprintf '%s\\n' {' '.join(map(quote, lines))} > {quote(path)}"


def holds_lines(path: str, lines: list[str]) -> str:
    """Evaluation text: `path` holds exactly `lines`."""
    return f'[ "$(cat {quote(path)})" = {quote(chr(10).join(lines))} ]'


def pick(rng: random.Random, pool: list[str], count: int) -> list[str]:
    return rng.sample(pool, count)


@template("mkdir")
def make_nested_directory(rng: random.Random) -> Draft:
    path = (
        f"/srv/{rng.choice(PROJECTS)}/{rng.choice(WORDS)}/{rng.choice(WORDS)}{rng.randint(1, 99)}"
    )
    return Draft(
        f"Create the directory {path}, together with any missing parent directories.",
        "true",
        f"mkdir -p {path}",
        f"[ -d {path} ]",
    )


@template("cd", "mkdir", "touch")
def make_files_in_new_directory(rng: random.Random) -> Draft:
    base, sub = f"/srv/{rng.choice(PROJECTS)}", rng.choice(WORDS)
    files = [f"{w}.{rng.choice(['txt', 'md', 'cfg'])}" for w in pick(rng, WORDS, 3)]
    checks = " && ".join(f"[ -f {base}/{sub}/{f} ] && [ ! -s {base}/{sub}/{f} ]" for f in files)
    return Draft(
        f"In {base}, create a subdirectory {sub} containing the empty files {', '.join(files)}.",
        f"mkdir -p {base}",
        f"cd {base}\nmkdir {sub}\ncd {sub}\ntouch {' '.join(files)}",
        checks,
    )


@template("touch")
def touch_empty_files(rng: random.Random) -> Draft:
    folder = f"/var/lib/{rng.choice(PROJECTS)}"
    files = [f"{w}.lock" for w in pick(rng, WORDS, rng.randint(1, 3))]
    paths = [f"{folder}/{f}" for f in files]
    return Draft(
        f"Create the empty files {', '.join(paths)} (the directory exists).",
        f"mkdir -p {folder}",
        f"touch {' '.join(paths)}",
        " && ".join(f"[ -f {p} ] && [ ! -s {p} ]" for p in paths),
    )


@template("echo")
def overwrite_with_line(rng: random.Random) -> Draft:
    path = f"/etc/{rng.choice(PROJECTS)}/motd"
    line = f"Welcome to {rng.choice(PROJECTS)} {rng.randint(1, 9)}"
    return Draft(
        f"Replace the whole content of {path} with the single line: {line}",
        write_lines(path, random_lines(rng, 3)),
        f"echo {quote(line)} > {path}",
        holds_lines(path, [line]),
    )


@template("echo")
def append_export(rng: random.Random) -> Draft:
    name, value = f"{rng.choice(WORDS).upper()}_HOME", f"/opt/{rng.choice(PROJECTS)}"
    line = f"export {name}={value}"
    return Draft(
        f"Add the line `{line}` at the end of /root/.profile, keeping what is there.",
        "true",
        f"echo {quote(line)} >> /root/.profile",
        f'[ "$(tail -n 1 /root/.profile)" = {quote(line)} ] && grep -q mesg /root/.profile',
    )


@template("echo", "tee")
def append_to_two_files(rng: random.Random) -> Draft:
    project = rng.choice(PROJECTS)
    first, second = f"/var/log/{project}/a.log", f"/var/log/{project}/b.log"
    old_a, old_b, line = (
        random_lines(rng, 2),
        random_lines(rng, 3),
        f"rotated {rng.randint(100, 999)}",
    )
    return Draft(
        f"Append the line '{line}' to both {first} and {second}, keeping their content.",
        write_lines(first, old_a) + "\n" + write_lines(second, old_b),
        f"echo {quote(line)} | tee -a {first} {second}",
        holds_lines(first, [*old_a, line]) + " && " + holds_lines(second, [*old_b, line]),
    )


@template("cat")
def concatenate_parts(rng: random.Random) -> Draft:
    folder = f"/data/{rng.choice(PROJECTS)}"
    parts = [random_lines(rng, rng.randint(1, 3)) for _ in range(rng.randint(2, 4))]
    init = "\n".join(write_lines(f"{folder}/part{i + 1}.txt", p) for i, p in enumerate(parts))
    names = " ".join(f"{folder}/part{i + 1}.txt" for i in range(len(parts)))
    return Draft(
        f"Join the files part1.txt to part{len(parts)}.txt of {folder}, in that order, "
        f"into {folder}/full.txt.",
        init,
        f"cat {names} > {folder}/full.txt",
        holds_lines(f"{folder}/full.txt", [line for part in parts for line in part]),
    )


@template("cat")
def write_config_file(rng: random.Random) -> Draft:
    path = f"/etc/{rng.choice(PROJECTS)}/app.ini"
    lines = ["[server]", f"port = {rng.randint(1024, 9999)}", f"name = {rng.choice(WORDS)}"]
    body = "\n".join(lines)
    return Draft(
        f"Create {path} holding exactly these three lines:\n{body}",
        f"mkdir -p {path.rsplit('/', 1)[0]}",
        f"cat > {path} <<'EOF'\n{body}\nEOF",
        holds_lines(path, lines),
    )


@template("cp")
def copy_file(rng: random.Random) -> Draft:
    project = rng.choice(PROJECTS)
    source, target = f"/opt/{project}/config.yaml", f"/backup/{project}"
    return Draft(
        f"Copy {source} into the directory {target}, keeping its name.",
        write_lines(source, random_lines(rng, 4)) + f"\nmkdir -p {target}",
        f"cp {source} {target}/",
        f"cmp -s {source} {target}/config.yaml",
    )


@template("cp")
def copy_tree(rng: random.Random) -> Draft:
    project = rng.choice(PROJECTS)
    source, target = f"/srv/{project}/site", f"/var/backups/{project}-site"
    init = write_lines(f"{source}/index.html", random_lines(rng, 2)) + "\n"
    init += write_lines(f"{source}/css/{rng.choice(WORDS)}.css", random_lines(rng, 3))
    return Draft(
        f"Copy the directory {source} with everything in it to {target} (a new directory).",
        init,
        f"cp -r {source} {target}",
        f"[ -d {target} ] && diff -r {source} {target} >/dev/null",
    )


@template("mv")
def rename_file(rng: random.Random) -> Draft:
    folder = f"/home/shared/{rng.choice(PROJECTS)}"
    old, new = f"{rng.choice(WORDS)}-draft.txt", f"{rng.choice(WORDS)}-final.txt"
    lines = random_lines(rng, 2)
    return Draft(
        f"Rename {folder}/{old} to {folder}/{new}.",
        write_lines(f"{folder}/{old}", lines),
        f"mv {folder}/{old} {folder}/{new}",
        f"[ ! -e {folder}/{old} ] && " + holds_lines(f"{folder}/{new}", lines),
    )


@template("cd", "mkdir", "mv")
def archive_by_extension(rng: random.Random) -> Draft:
    folder, ext = f"/srv/{rng.choice(PROJECTS)}/files", rng.choice(["log", "csv", "bak"])
    moved = [f"{w}.{ext}" for w in pick(rng, WORDS, rng.randint(2, 4))]
    kept = [f"{w}.txt" for w in pick(rng, WORDS, 2)]
    init = f"mkdir -p {folder}\ncd {folder}\ntouch {' '.join(moved + kept)}"
    checks = [f"[ -f {folder}/archive/{m} ] && [ ! -e {folder}/{m} ]" for m in moved]
    checks += [f"[ -f {folder}/{k} ]" for k in kept]
    return Draft(
        f"Move every .{ext} file of {folder} into a new subdirectory {folder}/archive; "
        "leave the other files where they are.",
        init,
        f"cd {folder}\nmkdir archive\nmv *.{ext} archive/",
        " && ".join(checks),
    )


@template("rm")
def remove_by_pattern(rng: random.Random) -> Draft:
    folder = f"/var/tmp/{rng.choice(PROJECTS)}"
    doomed = [f"{w}.tmp" for w in pick(rng, WORDS, rng.randint(2, 4))]
    kept = [f"{w}.dat" for w in pick(rng, WORDS, 2)]
    init = f"mkdir -p {folder}\ncd {folder}\ntouch {' '.join(doomed + kept)}"
    checks = [f"[ ! -e {folder}/{d} ]" for d in doomed] + [f"[ -f {folder}/{k} ]" for k in kept]
    return Draft(
        f"Delete all .tmp files in {folder}, and nothing else.",
        init,
        f"rm {folder}/*.tmp",
        " && ".join(checks),
    )


@template("rm")
def remove_directory(rng: random.Random) -> Draft:
    project = rng.choice(PROJECTS)
    cache = f"/srv/{project}/cache"
    init = write_lines(f"{cache}/{rng.choice(WORDS)}/data.bin", random_lines(rng, 2))
    init += "\n" + write_lines(f"/srv/{project}/keep.txt", random_lines(rng, 1))
    return Draft(
        f"Remove the directory {cache} and everything inside it; keep the rest of /srv/{project}.",
        init,
        f"rm -r {cache}",
        f"[ ! -e {cache} ] && [ -f /srv/{project}/keep.txt ]",
    )


@template("ln")
def symbolic_link(rng: random.Random) -> Draft:
    tool = rng.choice(PROJECTS)
    target, link = f"/opt/{tool}/bin/{tool}", f"/usr/local/bin/{tool}"
    return Draft(
        f"Create a symbolic link {link} that points to {target}.",
        write_lines(target, ["#!/bin/sh", "echo ok"]) + f"\nchmod +x {target}",
        f"ln -s {target} {link}",
        f'[ -L {link} ] && [ "$(readlink {link})" = {target} ]',
    )


@template("ln")
def hard_link(rng: random.Random) -> Draft:
    project = rng.choice(PROJECTS)
    source, link = f"/data/{project}/report.csv", f"/data/{project}/latest.csv"
    return Draft(
        f"Make {link} a hard link (not a symbolic link) to {source}.",
        write_lines(source, random_lines(rng, 3)),
        f"ln {source} {link}",
        f"[ {source} -ef {link} ] && [ ! -L {link} ]",
    )


@template("chmod")
def set_mode(rng: random.Random) -> Draft:
    mode = rng.choice(["750", "640", "600", "755", "700", "644", "711", "664"])
    path = f"/srv/{rng.choice(PROJECTS)}/{rng.choice(WORDS)}.sh"
    return Draft(
        f"Set the permissions of {path} to {mode} (octal).",
        write_lines(path, ["#!/bin/sh", "true"]) + f"\nchmod 000 {path}",
        f"chmod {mode} {path}",
        f'[ "$(stat -c %a {path})" = {mode} ]',
    )


@template("echo", "chmod", "exit")
def script_with_status(rng: random.Random) -> Draft:
    name, status = f"{rng.choice(WORDS)}-probe", rng.randint(2, 120)
    path = f"/usr/local/bin/{name}"
    return Draft(
        f"Create an executable script {path} that does nothing but exit with status {status}.",
        "true",
        f"echo 'exit {status}' > {path}\nchmod +x {path}",
        f"[ -x {path} ] && {{ {path}; [ $? -eq {status} ]; }}",
    )


@template("cat", "chmod", "echo", "exit")
def conditional_script(rng: random.Random) -> Draft:
    project, status = rng.choice(PROJECTS), rng.randint(3, 9)
    path, flag = f"/root/check-{project}.sh", f"/tmp/{project}.ready"
    body = f"if [ -e {flag} ]; then\n  echo ok\n  exit 0\nfi\nexit {status}"
    return Draft(
        f"Write an executable script {path}: if {flag} exists it prints ok and exits with "
        f"status 0, otherwise it exits with status {status}.",
        "true",
        f"cat > {path} <<'EOF'\n#!/bin/bash\n{body}\nEOF\nchmod +x {path}",
        f"[ -x {path} ] && {{ rm -f {flag}; {path}; [ $? -eq {status} ]; }} && "
        f'touch {flag} && [ "$({path})" = ok ]',
    )
