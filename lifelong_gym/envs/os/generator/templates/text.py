"""Generator templates for searching and text: grep, wc, awk, sed, find, ls, vi, sleep."""

from __future__ import annotations

import random
from shlex import quote

from lifelong_gym.envs.os.generator.templates import (
    PROJECTS,
    WORDS,
    Draft,
    holds_lines,
    random_lines,
    template,
    write_lines,
)

LEVELS = ("INFO", "WARN", "ERROR", "DEBUG")


def _log(rng: random.Random, count: int) -> list[str]:
    return [f"{rng.choice(LEVELS)} {rng.choice(WORDS)} {rng.randint(1, 99)}" for _ in range(count)]


def _number_in(path: str, value: int) -> str:
    return f"[ \"$(tr -d ' \\n' < {path})\" = {value} ]"


@template("grep")
def save_matching_lines(rng: random.Random) -> Draft:
    project, level = rng.choice(PROJECTS), rng.choice(LEVELS[:3])
    log, out = f"/var/log/{project}/app.log", f"/root/{level.lower()}-{project}.txt"
    lines = _log(rng, 12) + [f"{level} forced 1"]
    rng.shuffle(lines)
    return Draft(
        f"Save the lines of {log} that contain {level}, in their order, to {out}.",
        write_lines(log, lines),
        f"grep {level} {log} > {out}",
        holds_lines(out, [line for line in lines if level in line]),
    )


@template("grep", "wc")
def count_matching_lines(rng: random.Random) -> Draft:
    project, level = rng.choice(PROJECTS), rng.choice(LEVELS)
    log, out = f"/var/log/{project}/service.log", f"/root/{level.lower()}-count"
    lines = _log(rng, rng.randint(8, 20)) + [f"{level} forced 2"]
    count = sum(level in line for line in lines)
    return Draft(
        f"Write the number of lines of {log} containing {level} (just the number) into {out}.",
        write_lines(log, lines),
        f"grep {level} {log} | wc -l > {out}",
        _number_in(out, count),
    )


@template("wc")
def count_words_or_lines(rng: random.Random) -> Draft:
    path = f"/home/shared/{rng.choice(PROJECTS)}/essay.txt"
    lines = random_lines(rng, rng.randint(3, 15))
    words = rng.random() < 0.5
    value = sum(len(line.split()) for line in lines) if words else len(lines)
    out = f"/root/{'words' if words else 'lines'}.txt"
    return Draft(
        f"Write the number of {'words' if words else 'lines'} in {path} (just the number) "
        f"into {out}.",
        write_lines(path, lines),
        f"wc -{'w' if words else 'l'} < {path} > {out}",
        _number_in(out, value),
    )


def _sales(rng: random.Random) -> list[tuple[str, int, int]]:
    names = rng.sample(WORDS, rng.randint(4, 8))
    return [(name, rng.randint(1, 50), rng.randint(10, 500)) for name in names]


@template("awk")
def sum_column(rng: random.Random) -> Draft:
    path, rows = f"/data/{rng.choice(PROJECTS)}/sales.csv", _sales(rng)
    out = "/root/total.txt"
    return Draft(
        f"{path} has lines item,quantity,price. Write the sum of the price column "
        f"(just the number) into {out}.",
        write_lines(path, [f"{n},{q},{p}" for n, q, p in rows]),
        f"awk -F, '{{s += $3}} END {{print s}}' {path} > {out}",
        _number_in(out, sum(p for _, _, p in rows)),
    )


@template("awk")
def filter_rows(rng: random.Random) -> Draft:
    path, rows = f"/data/{rng.choice(PROJECTS)}/stock.csv", _sales(rng)
    limit = sorted(q for _, q, _ in rows)[len(rows) // 2]
    out = "/root/low-stock.txt"
    return Draft(
        f"{path} has lines item,quantity,price. Write the items whose quantity is below "
        f"{limit}, one per line in file order, into {out}.",
        write_lines(path, [f"{n},{q},{p}" for n, q, p in rows]),
        f"awk -F, '$2 < {limit} {{print $1}}' {path} > {out}",
        holds_lines(out, [n for n, q, _ in rows if q < limit]) + f" && [ -f {out} ]",
    )


@template("sed")
def replace_word(rng: random.Random) -> Draft:
    path = f"/etc/{rng.choice(PROJECTS)}/settings.conf"
    old, new = rng.sample(WORDS, 2)
    lines = [f"{rng.choice([old, 'mode'])} = {rng.choice(WORDS)}" for _ in range(5)]
    lines.append(f"host = {old}")
    expected = [line.replace(old, new) for line in lines]
    return Draft(
        f"In {path}, replace every occurrence of '{old}' with '{new}' (edit the file in place).",
        write_lines(path, lines),
        f"sed -i 's/{old}/{new}/g' {path}",
        holds_lines(path, expected),
    )


@template("sed")
def delete_comment_lines(rng: random.Random) -> Draft:
    path = f"/etc/{rng.choice(PROJECTS)}/hosts.allow"
    lines = [f"# {rng.choice(WORDS)}" if rng.random() < 0.4 else f"allow {rng.choice(WORDS)}"
             for _ in range(8)] + ["# end"]  # fmt: skip
    return Draft(
        f"Delete every comment line (lines starting with #) from {path}, in place.",
        write_lines(path, lines),
        f"sed -i '/^#/d' {path}",
        holds_lines(path, [line for line in lines if not line.startswith("#")]),
    )


@template("find")
def list_files_by_extension(rng: random.Random) -> Draft:
    root, ext = f"/data/{rng.choice(PROJECTS)}", rng.choice(["conf", "json", "ini"])
    wanted = [f"{root}/{rng.choice(WORDS)}{i}/{rng.choice(WORDS)}.{ext}" for i in range(3)]
    wanted.append(f"{root}/top.{ext}")
    others = [f"{root}/{rng.choice(WORDS)}/{rng.choice(WORDS)}.txt" for _ in range(2)]
    init = "\n".join(f"mkdir -p {p.rsplit('/', 1)[0]} && touch {p}" for p in wanted + others)
    expected = "\n".join(sorted(wanted))
    return Draft(
        f"Write the full paths of all .{ext} files under {root} (any depth), one per line, "
        "into /root/found.txt.",
        init,
        f"find {root} -type f -name '*.{ext}' > /root/found.txt",
        f'[ "$(sort /root/found.txt)" = {quote(expected)} ]',
    )


@template("find")
def delete_empty_files(rng: random.Random) -> Draft:
    root = f"/srv/{rng.choice(PROJECTS)}/upload"
    empty = [f"{root}/{rng.choice(WORDS)}{i}.part" for i in range(rng.randint(2, 4))]
    full = f"{root}/sub/{rng.choice(WORDS)}.part"
    init = f"mkdir -p {root}/sub\ntouch {' '.join(empty)} {root}/sub/zero.part\necho x > {full}"
    checks = [f"[ ! -e {p} ]" for p in [*empty, f"{root}/sub/zero.part"]] + [f"[ -s {full} ]"]
    return Draft(
        f"Delete every empty regular file under {root} (at any depth); keep the others.",
        init,
        f"find {root} -type f -empty -delete",
        " && ".join(checks),
    )


@template("ls")
def save_listing(rng: random.Random) -> Draft:
    folder = f"/opt/{rng.choice(PROJECTS)}"
    names = sorted(rng.sample(WORDS, rng.randint(3, 6)))
    return Draft(
        f"Write the names of the entries of {folder} (no hidden ones), one per line in "
        "alphabetical order, into /root/listing.txt.",
        f"mkdir -p {folder}\ncd {folder}\ntouch {' '.join(names)} .hidden",
        f"ls {folder} > /root/listing.txt",
        holds_lines("/root/listing.txt", names),
    )


@template("ls", "grep", "wc")
def count_hidden_entries(rng: random.Random) -> Draft:
    folder = f"/home/shared/{rng.choice(PROJECTS)}"
    hidden = [f".{w}" for w in rng.sample(WORDS, rng.randint(1, 5))]
    visible = rng.sample(WORDS, 3)
    return Draft(
        f"Write the number of hidden entries in {folder} (just the number) into /root/hidden.",
        f"mkdir -p {folder}\ncd {folder}\ntouch {' '.join(hidden + visible)}",
        f"ls -A {folder} | grep '^\\.' | wc -l > /root/hidden",
        _number_in("/root/hidden", len(hidden)),
    )


@template("vi")
def edit_with_vi(rng: random.Random) -> Draft:
    path = f"/etc/{rng.choice(PROJECTS)}/notes.txt"
    lines = random_lines(rng, 4)
    if rng.random() < 0.5:
        line = rng.randint(1, 4)
        return Draft(
            f"Delete line {line} of {path} and keep the other lines.",
            write_lines(path, lines),
            f"vi -es -c '{line}d' -c 'wq' {path}",
            holds_lines(path, lines[: line - 1] + lines[line:]),
        )
    extra = f"{rng.choice(WORDS)} appended {rng.randint(1, 99)}"
    return Draft(
        f"Add the line '{extra}' at the end of {path}.",
        write_lines(path, lines),
        f"vi -es -c 'normal Go{extra}' -c 'wq' {path}",
        holds_lines(path, [*lines, extra]),
    )


@template("touch", "sleep")
def timed_files(rng: random.Random) -> Draft:
    folder, gap = f"/tmp/{rng.choice(PROJECTS)}", rng.randint(1, 2)
    first, second = f"{folder}/start.stamp", f"{folder}/end.stamp"
    return Draft(
        f"Create {first}, then wait, then create {second} so that its modification time is "
        f"at least {gap} seconds later than that of {first}.",
        f"mkdir -p {folder}",
        # a second past the bound: a file's time comes from the kernel's coarse clock, which
        # can be a tick behind `sleep`'s, so `sleep {gap}` may give a whole-second gap of gap-1
        f"touch {first}\nsleep {gap + 1}\ntouch {second}",
        f"[ -f {first} ] && [ -f {second} ] && "
        f"[ $(( $(stat -c %Y {second}) - $(stat -c %Y {first}) )) -ge {gap} ]",
    )
