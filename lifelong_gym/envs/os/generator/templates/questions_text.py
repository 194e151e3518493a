"""Question templates about what files and accounts hold: lines with a word, words, sums,
config values, group members, account fields, scripts' results. Each solution prints
exactly the answer."""

from __future__ import annotations

import random

from lifelong_gym.envs.os.generator.templates import (
    GROUPS,
    PROJECTS,
    SHELLS,
    USERS,
    WORDS,
    Question,
    pick,
    question,
    random_lines,
    write_lines,
)
from lifelong_gym.envs.os.generator.templates.questions_files import (
    NAME,
    NUMBER,
    ask,
    random_folder,
)


def _text_file(rng: random.Random) -> str:
    return f"{random_folder(rng)}/{rng.choice(['notes', 'report', 'data', 'words'])}.txt"


@question("grep")
def count_lines_with_word(rng: random.Random) -> Question:
    path, word = _text_file(rng), rng.choice(WORDS)
    lines = random_lines(rng, rng.randint(5, 25))
    at = rng.randrange(len(lines))
    lines[at] = f"{word} {lines[at]}"  # one line at least: `grep -c` fails finding none
    instruction = ask(
        rng,
        (
            f"How many lines of {path} contain the word {word}?",
            f"Tell me the number of lines in {path} that mention {word} (as a whole word).",
            f"Count the lines of {path} in which the word {word} appears.",
        ),
        NUMBER,
    )
    count = sum(1 for line in lines if word in line.split())
    return Question(instruction, write_lines(path, lines), f"grep -cw {word} {path}", str(count))


@question("wc")
def count_words(rng: random.Random) -> Question:
    path = _text_file(rng)
    lines = [" ".join(rng.choices(WORDS, k=rng.randint(1, 9))) for _ in range(rng.randint(2, 9))]
    instruction = ask(
        rng,
        (
            f"How many words are there in {path}?",
            f"What is the number of words in the file {path}?",
            f"Tell me how many words {path} holds.",
        ),
        NUMBER,
    )
    count = sum(len(line.split()) for line in lines)
    return Question(instruction, write_lines(path, lines), f"wc -w < {path}", str(count))


@question("cat", "wc")
def count_lines_of_files(rng: random.Random) -> Question:
    folder = random_folder(rng)
    parts = [random_lines(rng, rng.randint(1, 9)) for _ in range(rng.randint(2, 4))]
    paths = [f"{folder}/{w}.log" for w in pick(rng, WORDS, len(parts))]
    init = "\n".join(write_lines(p, lines) for p, lines in zip(paths, parts, strict=True))
    init += f"\n{write_lines(f'{folder}/old/{rng.choice(WORDS)}.log', random_lines(rng, 3))}"
    instruction = ask(
        rng,
        (
            f"How many lines do the .log files directly in {folder} have together?",
            f"Tell me the total number of lines of all the .log files at the top of {folder} "
            "(not in its subfolders).",
        ),
        NUMBER,
    )
    total = sum(len(lines) for lines in parts)
    return Question(instruction, init, f"cat {folder}/*.log | wc -l", str(total))


@question("awk")
def sum_of_numbers(rng: random.Random) -> Question:
    path = f"{random_folder(rng)}/{rng.choice(['amounts', 'values', 'scores'])}.txt"
    numbers = [rng.randint(-50, 999) for _ in range(rng.randint(3, 15))]
    instruction = ask(
        rng,
        (
            f"{path} holds one number a line. What is their sum?",
            f"What do the numbers in {path} (one a line) add up to?",
            f"Tell me the sum of all the numbers in {path}; there is one on each line.",
        ),
        NUMBER,
    )
    return Question(
        instruction,
        write_lines(path, [str(n) for n in numbers]),
        f"awk '{{s += $1}} END {{print s}}' {path}",
        str(sum(numbers)),
    )


@question("grep", "awk")
def file_containing_string(rng: random.Random) -> Question:
    folder, token = random_folder(rng), f"ID-{rng.randint(10000, 99999)}"
    subs = [folder, f"{folder}/{rng.choice(WORDS)}"]
    paths = [f"{rng.choice(subs)}/{w}.txt" for w in pick(rng, WORDS, rng.randint(3, 7))]
    chosen = rng.choice(paths)
    init = [
        write_lines(p, random_lines(rng, 3) + ([f"ref {token}"] if p == chosen else []))
        for p in paths
    ]
    instruction = ask(
        rng,
        (
            f"Which file under {folder} contains the string {token}?",
            f"One file somewhere in {folder} mentions {token}. What is its name?",
            f"Find the file in {folder} (subfolders included) that holds {token} and tell me "
            "its name.",
        ),
        NAME,
    )
    return Question(
        instruction,
        "\n".join(init),
        f"grep -rl {token} {folder} | awk -F/ '{{print $NF}}'",
        chosen.rsplit("/", 1)[1],
    )


@question("awk")
def config_value(rng: random.Random) -> Question:
    path = f"/etc/{rng.choice(PROJECTS)}/{rng.choice(['app', 'service', 'server'])}.env"
    key = rng.choice(["PORT", "WORKERS", "TIMEOUT", "MAX_CONN", "CACHE_MB"])
    value = str(rng.randint(2, 9000))
    lines = [f"#{key}={rng.randint(2, 9000)}", f"NAME={rng.choice(WORDS)}", f"{key}={value}"]
    lines += [f"{key}_OLD={rng.randint(2, 9000)}", f"HOST={rng.choice(PROJECTS)}.local"]
    rng.shuffle(lines)
    instruction = ask(
        rng,
        (
            f"What is the value of {key} in {path}?",
            f"Which value does {path} set {key} to?",
            f"Tell me what {key} is set to in the config file {path}.",
        ),
        ("Answer with the value only.", "Reply with just the value."),
    )
    solution = f"awk -F= '$1 == \"{key}\" {{print $2}}' {path}"
    return Question(instruction, write_lines(path, lines), solution, value)


@question("sed")
def ini_value(rng: random.Random) -> Question:
    path = f"/etc/{rng.choice(PROJECTS)}/{rng.choice(['main', 'daemon', 'site'])}.ini"
    key = rng.choice(["owner", "theme", "region", "backend", "mode"])
    value = f"{rng.choice(WORDS)}-{rng.randint(1, 99)}"
    lines = ["[general]", f"{key} = {value}", f"; {key} = {rng.choice(WORDS)}"]
    lines += [f"level = {rng.randint(1, 5)}", f"default_{key} = {rng.choice(WORDS)}"]
    instruction = ask(
        rng,
        (
            f"In {path}, what is {key} set to?",
            f"What value does the setting {key} have in {path}?",
        ),
        ("Answer with the value only.", "Reply with just the value."),
    )
    return Question(instruction, write_lines(path, lines), f"sed -n 's/^{key} = //p' {path}", value)


@question("sed")
def line_at_number(rng: random.Random) -> Question:
    path = _text_file(rng)
    lines = random_lines(rng, rng.randint(4, 20))
    number = rng.randint(2, len(lines))
    instruction = ask(
        rng,
        (
            f"What does line {number} of {path} say?",
            f"Tell me the content of line number {number} in {path}.",
        ),
        ("Answer with that line only.", "Reply with just the line."),
    )
    solution = f"sed -n '{number}p' {path}"
    return Question(instruction, write_lines(path, lines), solution, lines[number - 1])


@question("cat", "grep", "awk")
def members_of_group(rng: random.Random) -> Question:
    group, other = pick(rng, GROUPS, 2)
    users = pick(rng, USERS, rng.randint(2, 7))
    members = users[: rng.randint(1, len(users) - 1)]
    init = [f"groupadd {group}", f"groupadd {other}"]
    init += [f"useradd -m -G {group} {u}" for u in members]
    init += [f"useradd -m -G {other} {u}" for u in users[len(members) :]]
    instruction = ask(
        rng,
        (
            f"How many users are in the group {group}?",
            f"Tell me the number of members of the group {group}.",
            f"Check /etc/group and tell me how many users belong to {group}.",
        ),
        NUMBER,
    )
    solution = f"cat /etc/group | grep '^{group}:' | awk -F: '{{print split($4, m, \",\")}}'"
    return Question(instruction, "\n".join(init), solution, str(len(members)))


@question("grep", "awk")
def account_field(rng: random.Random) -> Question:
    user = rng.choice(USERS)
    field, value, option = rng.choice(
        [
            (7, rng.choice(SHELLS), "-s"),
            (3, str(rng.randint(1100, 4999)), "-u"),
            (6, f"/home/{rng.choice(PROJECTS)}/{user}", "-d"),
        ]
    )
    what = {7: "login shell", 3: "user id (UID)", 6: "home directory"}[field]
    parent = f"mkdir -p {value.rsplit('/', 1)[0]}\n" if field == 6 else ""
    init = f"{parent}useradd -m {option} {value} {user}"
    instruction = ask(
        rng,
        (
            f"What is the {what} of the user {user}?",
            f"Tell me the {what} of {user}.",
            f"Look up the account {user} and tell me its {what}.",
        ),
        ("Answer with the value only.", "Reply with just the value."),
    )
    solution = f"grep '^{user}:' /etc/passwd | awk -F: '{{print ${field}}}'"
    return Question(instruction, init, solution, value)


@question("chage", "grep", "awk")
def password_maximum_age(rng: random.Random) -> Question:
    user, days = rng.choice(USERS), rng.randint(7, 365)
    instruction = ask(
        rng,
        (
            f"What is the maximum number of days between password changes for {user}?",
            f"After how many days at most must {user} change the password?",
        ),
        NUMBER,
    )
    return Question(
        instruction,
        f"useradd -m {user}\nchage -M {days} -m {rng.randint(0, 5)} {user}",
        f"chage -l {user} | grep '^Maximum' | awk -F': ' '{{print $2}}'",
        str(days),
    )


@question("echo")
def variable_in_profile(rng: random.Random) -> Question:
    name = rng.choice(PROJECTS)
    path = f"/etc/profile.d/{name}.sh"
    base, leaf = f"/opt/{name}-{rng.randint(1, 9)}", rng.choice(["bin", "lib", "data", "logs"])
    variable = f"{name.upper()}_{leaf.upper()}"
    lines = [f"{name.upper()}_BASE={base}", f"{variable}=${name.upper()}_BASE/{leaf}"]
    instruction = ask(
        rng,
        (
            f"What value does {variable} get when {path} is sourced?",
            f"Tell me the value {path} gives to the variable {variable}.",
        ),
        ("Answer with the value only.", "Reply with just the value."),
    )
    solution = f"bash -c '. {path}; echo \"${variable}\"'"
    return Question(instruction, write_lines(path, lines), solution, f"{base}/{leaf}")


@question("echo")
def exit_status_of_script(rng: random.Random) -> Question:
    path = f"/usr/local/bin/{rng.choice(WORDS)}-check"
    flag = f"/tmp/{rng.choice(PROJECTS)}.flag"
    present, absent = rng.sample(range(1, 100), 2)
    exists = rng.random() < 0.5
    body = [f"if [ -e {flag} ]; then", f"  exit {present}", "fi", f"exit {absent}"]
    init = write_lines(path, ["#!/bin/bash", *body]) + f"\nchmod +x {path}"
    init += f"\ntouch {flag}" if exists else ""
    instruction = ask(
        rng,
        (
            f"With which exit status does {path} end when it is run now?",
            f"Run {path} and tell me its exit code.",
            f"What exit status does the script {path} return?",
        ),
        NUMBER,
    )
    answer = str(present if exists else absent)
    return Question(instruction, init, f"{path}\necho $?", answer)
