"""Question templates about files and folders: how many, which is largest or newest, whose,
with which permissions. Each solution prints exactly the answer."""

from __future__ import annotations

import random

from lifelong_gym.envs.os.generator.templates import (
    GROUPS,
    PROJECTS,
    USERS,
    WORDS,
    Question,
    pick,
    question,
    random_lines,
    write_lines,
)

NUMBER = ("Answer with the number only.", "Reply with just the number.", "Give only the number.")
NAME = ("Answer with the file name only.", "Reply with just its name.", "Give only the name.")


def random_folder(rng: random.Random) -> str:
    top = rng.choice(["/srv", "/opt", "/data", "/home/shared", "/var/lib"])
    return f"{top}/{rng.choice(PROJECTS)}-{rng.choice(WORDS)}{rng.randint(1, 99)}"


def ask(rng: random.Random, phrasings: tuple[str, ...], reply: tuple[str, ...]) -> str:
    return f"{rng.choice(phrasings)} {rng.choice(reply)}"


@question("find", "wc")
def count_files_with_extension(rng: random.Random) -> Question:
    folder, ext = random_folder(rng), rng.choice(["log", "csv", "conf", "txt", "py", "json"])
    subs = [folder] + [f"{folder}/{w}" for w in pick(rng, WORDS, rng.randint(1, 3))]
    matching = [f"{rng.choice(subs)}/{w}{i}.{ext}" for i, w in enumerate(pick(rng, WORDS, 6))]
    matching = matching[: rng.randint(1, 6)]
    hidden = [f"{rng.choice(subs)}/.{w}.{ext}" for w in pick(rng, WORDS, rng.randint(0, 2))]
    decoys = [f"{rng.choice(subs)}/{w}.{ext}.bak" for w in pick(rng, WORDS, rng.randint(1, 3))]
    decoys += [f"{rng.choice(subs)}/{w}.{ext}x" for w in pick(rng, WORDS, rng.randint(0, 2))]
    init = "\n".join(
        [f"mkdir -p {' '.join(subs)} {folder}/old.{ext}"]
        + [f"touch {p}" for p in sorted(set(matching + hidden + decoys))]
    )
    count = len(set(matching + hidden))
    instruction = ask(
        rng,
        (
            f"How many .{ext} files are there in {folder}, subfolders and hidden files included?",
            f"Tell me the number of files ending in .{ext} anywhere under {folder} "
            "(hidden ones count too).",
            f"Count the regular files named *.{ext} in {folder} and all its subdirectories, "
            "hidden files included.",
        ),
        NUMBER,
    )
    return Question(instruction, init, f"find {folder} -type f -name '*.{ext}' | wc -l", str(count))


@question("find", "wc")
def count_directories(rng: random.Random) -> Question:
    folder = random_folder(rng)
    dirs = {folder}
    for _ in range(rng.randint(2, 7)):
        dirs.add(f"{rng.choice(sorted(dirs))}/{rng.choice(WORDS)}")
    files = [f"{rng.choice(sorted(dirs))}/{w}.txt" for w in pick(rng, WORDS, rng.randint(1, 4))]
    init = f"mkdir -p {' '.join(sorted(dirs))}\n" + "\n".join(f"touch {f}" for f in files)
    instruction = ask(
        rng,
        (
            f"How many directories are inside {folder}, at any depth ({folder} itself not "
            "counted)?",
            f"Tell me how many subdirectories {folder} contains, counting nested ones.",
            f"Find all the folders below {folder} (not {folder} itself) and tell me how many "
            "there are.",
        ),
        NUMBER,
    )
    return Question(
        instruction, init, f"find {folder} -mindepth 1 -type d | wc -l", str(len(dirs) - 1)
    )


@question("find", "wc")
def count_files_of_user(rng: random.Random) -> Question:
    owner, other = pick(rng, USERS, 2)
    folder = random_folder(rng)
    files = [f"{folder}/{w}.dat" for w in pick(rng, WORDS, rng.randint(3, 8))]
    owned = files[: rng.randint(1, len(files) - 1)]
    init = [f"useradd -m {owner}", f"useradd -m {other}", f"mkdir -p {folder}"]
    init += [f"touch {f}" for f in files] + [f"chown {other} {f}" for f in files]
    init += [f"chown {owner} {f}" for f in owned]
    instruction = ask(
        rng,
        (
            f"How many files in {folder} belong to the user {owner}?",
            f"Tell me the number of files under {folder} that are owned by {owner}.",
        ),
        NUMBER,
    )
    solution = f"find {folder} -type f -user {owner} | wc -l"
    return Question(instruction, "\n".join(init), solution, str(len(owned)))


@question("find")
def permissions_in_octal(rng: random.Random) -> Question:
    path = f"{random_folder(rng)}/{rng.choice(WORDS)}.{rng.choice(['sh', 'conf', 'key'])}"
    mode = rng.choice(["640", "600", "755", "700", "711", "644", "750", "444", "664", "751"])
    instruction = ask(
        rng,
        (
            f"What are the permissions of {path}, in octal?",
            f"Tell me the access mode of {path} as an octal number (like 644).",
            f"Which octal permission bits does {path} have?",
        ),
        ("Answer with the three digits only.", "Reply with just the octal mode."),
    )
    init = write_lines(path, random_lines(rng, 2)) + f"\nchmod {mode} {path}"
    return Question(instruction, init, f"find {path} -printf '%m\\n'", mode)


def _sized_files(rng: random.Random, folder: str) -> tuple[str, list[str]]:
    names = [f"{w}.{rng.choice(['bin', 'img', 'dat'])}" for w in pick(rng, WORDS, 5)]
    names = names[: rng.randint(3, 5)]
    sizes = rng.sample(range(100, 9000), len(names))
    init = [f"mkdir -p {folder}"] + [
        f"head -c {size} /dev/zero > {folder}/{name}"
        for name, size in zip(names, sizes, strict=True)
    ]
    return names[sizes.index(max(sizes))], init


@question("ls")
def largest_file(rng: random.Random) -> Question:
    folder = random_folder(rng)
    largest, init = _sized_files(rng, folder)
    instruction = ask(
        rng,
        (
            f"Which file in {folder} is the largest?",
            f"What is the name of the biggest file in {folder}?",
            f"Find the largest file in {folder} and tell me its name.",
        ),
        NAME,
    )
    return Question(instruction, "\n".join(init), f"ls -S {folder} | head -n 1", largest)


@question("ls")
def newest_file(rng: random.Random) -> Question:
    folder = random_folder(rng)
    names = [f"{w}.log" for w in pick(rng, WORDS, rng.randint(3, 6))]
    days = rng.sample(range(1, 28), len(names))
    init = [f"mkdir -p {folder}"] + [
        f"touch -d '2024-03-{day:02d} 10:00' {folder}/{name}"
        for name, day in zip(names, days, strict=True)
    ]
    instruction = ask(
        rng,
        (
            f"Which file in {folder} was modified most recently?",
            f"What is the newest file in {folder}?",
            f"Tell me the name of the most recently changed file in {folder}.",
        ),
        NAME,
    )
    newest = names[days.index(max(days))]
    return Question(instruction, "\n".join(init), f"ls -t {folder} | head -n 1", newest)


@question("ls", "awk")
def owner_of_file(rng: random.Random) -> Question:
    user, other = pick(rng, USERS, 2)
    folder = random_folder(rng)
    path = f"{folder}/{rng.choice(WORDS)}.txt"
    init = f"useradd -m {user}\nuseradd -m {other}\n" + write_lines(path, random_lines(rng, 2))
    init += f"\nchown {user} {path}\ntouch {folder}/{rng.choice(WORDS)}.bak\n"
    init += f"chown -h {other} {folder}/*.bak"
    instruction = ask(
        rng,
        (
            f"What is the owner of {path}?",
            f"Which user owns the file {path}?",
            f"Tell me who owns {path}.",
        ),
        ("Answer with the user name only.", "Reply with just the login name."),
    )
    return Question(instruction, init, f"ls -l {path} | awk '{{print $3}}'", user)


@question("ls", "awk")
def group_of_directory(rng: random.Random) -> Question:
    group, other = pick(rng, GROUPS, 2)
    folder = random_folder(rng)
    init = f"groupadd {group}\ngroupadd {other}\nmkdir -p {folder}/inner\n"
    init += f"chgrp {group} {folder}\nchgrp {other} {folder}/inner"
    instruction = ask(
        rng,
        (
            f"Which group does the directory {folder} belong to?",
            f"What is the group owner of {folder}?",
            f"Tell me the group of the folder {folder} (the folder itself).",
        ),
        ("Answer with the group name only.", "Reply with just the group's name."),
    )
    return Question(instruction, init, f"ls -ld {folder} | awk '{{print $4}}'", group)


@question("ls", "awk")
def size_in_bytes(rng: random.Random) -> Question:
    path = f"{random_folder(rng)}/{rng.choice(WORDS)}.txt"
    lines = random_lines(rng, rng.randint(1, 12))
    instruction = ask(
        rng,
        (
            f"What is the size of {path} in bytes?",
            f"How many bytes does {path} take?",
            f"Tell me the file size of {path}, in bytes.",
        ),
        NUMBER,
    )
    size = sum(len(line) + 1 for line in lines)
    solution = f"ls -l {path} | awk '{{print $5}}'"
    return Question(instruction, write_lines(path, lines), solution, str(size))


@question("ls", "awk")
def symbolic_link_target(rng: random.Random) -> Question:
    tool = rng.choice(PROJECTS)
    target = f"/opt/{tool}-{rng.randint(1, 9)}.{rng.randint(0, 20)}/bin/{tool}"
    link = f"/usr/local/bin/{tool}"
    init = write_lines(target, ["#!/bin/sh", "true"]) + f"\nln -s {target} {link}"
    instruction = ask(
        rng,
        (
            f"Where does the symbolic link {link} point to?",
            f"What is the target of the link {link}?",
        ),
        ("Answer with the target path only.", "Reply with just the path it points to."),
    )
    return Question(instruction, init, f"ls -l {link} | awk '{{print $NF}}'", target)


@question("cd", "ls", "wc")
def count_entries(rng: random.Random) -> Question:
    folder = random_folder(rng)
    files = pick(rng, WORDS, rng.randint(1, 6))
    dirs = [f"{w}-dir" for w in pick(rng, WORDS, rng.randint(0, 3))]
    hidden = [f".{w}" for w in pick(rng, WORDS, rng.randint(1, 2))]
    init = f"mkdir -p {folder}\ncd {folder}\ntouch {' '.join(files + hidden)}"
    init += "".join(f"\nmkdir {d}\ntouch {d}/inside" for d in dirs)
    instruction = ask(
        rng,
        (
            f"How many entries (files and folders, hidden ones not counted) are directly in "
            f"{folder}?",
            f"Tell me the number of visible files and directories at the top level of {folder}.",
        ),
        NUMBER,
    )
    return Question(instruction, init, f"cd {folder}\nls | wc -l", str(len(files) + len(dirs)))


@question("ls", "grep")
def count_hidden_entries(rng: random.Random) -> Question:
    home = f"/home/{rng.choice(USERS)}-{rng.choice(PROJECTS)}"
    hidden = [f".{w}rc" for w in pick(rng, WORDS, rng.randint(1, 5))]
    visible = [f"{w}.md" for w in pick(rng, WORDS, rng.randint(1, 4))]
    init = f"mkdir -p {home}/.cache\ncd {home}\ntouch {' '.join(hidden + visible)}"
    instruction = ask(
        rng,
        (
            f"How many hidden files and folders are there directly in {home}?",
            f"Tell me how many entries of {home} have a name starting with a dot (not . and ..).",
        ),
        NUMBER,
    )
    return Question(instruction, init, f"ls -A {home} | grep -c '^\\.'", str(len(hidden) + 1))
