"""Generator templates for users and groups: useradd, groupadd, addgroup, usermod, gpasswd,
chage, chsh, and ownership: chown, chgrp."""

from __future__ import annotations

import datetime
import random
from shlex import quote

from lifelong_gym.envs.os.generator.templates import (
    GROUPS,
    PROJECTS,
    SHELLS,
    USERS,
    WORDS,
    Draft,
    pick,
    random_lines,
    template,
    write_lines,
)


def _user_init(users: list[str], groups: tuple[str, ...] | list[str] = ()) -> str:
    lines = [f"groupadd {g}" for g in groups] + [f"useradd -m {u}" for u in users]
    return "\n".join(lines) or "true"


@template("chown")
def change_owner_recursively(rng: random.Random) -> Draft:
    user, project = rng.choice(USERS), rng.choice(PROJECTS)
    folder = f"/srv/{project}"
    init = (
        _user_init([user]) + "\n" + write_lines(f"{folder}/docs/readme.txt", random_lines(rng, 1))
    )
    return Draft(
        f"Make user {user} the owner of {folder} and of everything inside it.",
        init,
        f"chown -R {user} {folder}",
        f'[ -z "$(find {folder} ! -user {user})" ]',
    )


@template("chown")
def change_owner_and_group(rng: random.Random) -> Draft:
    user, group = rng.choice(USERS), rng.choice(GROUPS)
    path = f"/var/www/{rng.choice(PROJECTS)}.html"
    return Draft(
        f"Make {path} owned by user {user} and group {group}.",
        _user_init([user], [group]) + "\n" + write_lines(path, random_lines(rng, 1)),
        f"chown {user}:{group} {path}",
        f'[ "$(stat -c %U:%G {path})" = {user}:{group} ]',
    )


@template("chgrp")
def change_group(rng: random.Random) -> Draft:
    group, project = rng.choice(GROUPS), rng.choice(PROJECTS)
    folder = f"/shared/{project}"
    recursive = rng.random() < 0.5
    init = _user_init([], [group]) + "\n" + write_lines(f"{folder}/notes.txt", random_lines(rng, 1))
    what = f"{folder} and everything in it" if recursive else f"{folder}/notes.txt"
    check = (
        f"find {folder} ! -group {group}"
        if recursive
        else f"find {folder}/notes.txt ! -group {group}"
    )  # noqa: E501
    return Draft(
        f"Change the group of {what} to {group}.",
        init,
        f"chgrp -R {group} {folder}" if recursive else f"chgrp {group} {folder}/notes.txt",
        f'[ -z "$({check})" ]',
    )


@template("useradd")
def add_user_with_shell(rng: random.Random) -> Draft:
    user, shell = rng.choice(USERS), rng.choice(SHELLS[:2])
    return Draft(
        f"Create the user {user} with the home directory /home/{user} (created) and the login "
        f"shell {shell}.",
        "true",
        f"useradd -m -s {shell} {user}",
        f'[ "$(getent passwd {user} | cut -d: -f6,7)" = /home/{user}:{shell} ] && '
        f"[ -d /home/{user} ]",
    )


@template("groupadd", "useradd")
def add_user_in_group(rng: random.Random) -> Draft:
    user, group, uid = rng.choice(USERS), rng.choice(GROUPS), rng.randint(2000, 2999)
    return Draft(
        f"Create the group {group}, then the user {user} with UID {uid} and {group} as "
        "primary group.",
        "true",
        f"groupadd {group}\nuseradd -u {uid} -g {group} {user}",
        f'[ "$(id -u {user})" = {uid} ] && [ "$(id -gn {user})" = {group} ]',
    )


@template("groupadd")
def add_group_with_gid(rng: random.Random) -> Draft:
    group, gid = rng.choice(GROUPS), rng.randint(3000, 3999)
    return Draft(
        f"Create the group {group} with the GID {gid}.",
        "true",
        f"groupadd -g {gid} {group}",
        f'[ "$(getent group {group} | cut -d: -f3)" = {gid} ]',
    )


@template("addgroup")
def add_group_debian(rng: random.Random) -> Draft:
    group, gid = rng.choice(GROUPS), rng.randint(4000, 4999)
    system = rng.random() < 0.5
    if system:
        return Draft(
            f"Create {group} as a system group (a GID below 1000).",
            "true",
            f"addgroup --system {group}",
            f'gid=$(getent group {group} | cut -d: -f3) && [ "$gid" -lt 1000 ]',
        )
    return Draft(
        f"Create the group {group} with GID {gid}.",
        "true",
        f"addgroup --gid {gid} {group}",
        f'[ "$(getent group {group} | cut -d: -f3)" = {gid} ]',
    )


@template("usermod")
def append_supplementary_group(rng: random.Random) -> Draft:
    user = rng.choice(USERS)
    old, new = pick(rng, GROUPS, 2)
    return Draft(
        f"Add user {user} to the group {new} as well, keeping the groups it is already in.",
        _user_init([], [old, new]) + f"\nuseradd -m -G {old} {user}",
        f"usermod -aG {new} {user}",
        f"id -nG {user} | grep -qw {new} && id -nG {user} | grep -qw {old}",
    )


@template("usermod")
def modify_account(rng: random.Random) -> Draft:
    user = rng.choice(USERS)
    kind = rng.choice(["lock", "comment", "home"])
    init = _user_init([user])
    if kind == "lock":
        return Draft(
            f"Lock the password of the account {user} (it stays in the system).",
            init + f"\necho '{user}:Secret123' | chpasswd",
            f"usermod -L {user}",
            f"[ \"$(passwd -S {user} | cut -d' ' -f2)\" = L ]",
        )
    if kind == "comment":
        comment = f"{rng.choice(WORDS).title()} {rng.choice(PROJECTS).title()}"
        return Draft(
            f"Set the full-name (comment) field of user {user} to: {comment}",
            init,
            f"usermod -c {quote(comment)} {user}",
            f'[ "$(getent passwd {user} | cut -d: -f5)" = {quote(comment)} ]',
        )
    home = f"/data/home/{user}"
    return Draft(
        f"Move the home directory of {user} to {home}, moving its files along.",
        init + f"\nmkdir -p /data/home\necho hi > /home/{user}/note.txt",
        f"usermod -d {home} -m {user}",
        f'[ "$(getent passwd {user} | cut -d: -f6)" = {home} ] && [ -f {home}/note.txt ]',
    )


@template("gpasswd")
def group_membership_tool(rng: random.Random) -> Draft:
    user, group = rng.choice(USERS), rng.choice(GROUPS)
    kind = rng.choice(["add", "remove", "admin"])
    if kind == "add":
        return Draft(
            f"Add user {user} to group {group} with the group administration tool.",
            _user_init([user], [group]),
            f"gpasswd -a {user} {group}",
            f"id -nG {user} | grep -qw {group}",
        )
    if kind == "remove":
        return Draft(
            f"Remove user {user} from group {group} (the user stays).",
            _user_init([], [group]) + f"\nuseradd -m -G {group} {user}",
            f"gpasswd -d {user} {group}",
            f"id {user} >/dev/null && ! id -nG {user} | grep -qw {group}",
        )
    return Draft(
        f"Make user {user} an administrator of group {group}.",
        _user_init([user], [group]),
        f"gpasswd -A {user} {group}",
        f'[ "$(getent gshadow {group} | cut -d: -f3)" = {user} ]',
    )


@template("chage")
def password_ageing(rng: random.Random) -> Draft:
    user = rng.choice(USERS)
    field, option, what = rng.choice(
        [(5, "-M", "maximum"), (4, "-m", "minimum"), (6, "-W", "warning")]
    )
    days = rng.randint(3, 120)
    wording = {
        "maximum": f"must be changed at least every {days} days",
        "minimum": f"can be changed at most once every {days} days",
        "warning": f"warns the user {days} days before it expires",
    }[what]
    return Draft(
        f"Set the password policy of user {user} so that the password {wording}.",
        _user_init([user]),
        f"chage {option} {days} {user}",
        f'[ "$(getent shadow {user} | cut -d: -f{field})" = {days} ]',
    )


@template("chage")
def account_expiry(rng: random.Random) -> Draft:
    user = rng.choice(USERS)
    day = datetime.date(2030, 1, 1) + datetime.timedelta(days=rng.randint(0, 3000))
    since_epoch = (day - datetime.date(1970, 1, 1)).days
    return Draft(
        f"Make the account {user} expire on {day.isoformat()}.",
        _user_init([user]),
        f"chage -E {day.isoformat()} {user}",
        f'[ "$(getent shadow {user} | cut -d: -f8)" = {since_epoch} ]',
    )


@template("chsh")
def change_login_shell(rng: random.Random) -> Draft:
    user, shell = rng.choice(USERS), rng.choice(SHELLS)
    return Draft(
        f"Change the login shell of user {user} to {shell}.",
        f"useradd -m -s {'/bin/bash' if shell != '/bin/bash' else '/bin/sh'} {user}",
        f"chsh -s {shell} {user}",
        f'[ "$(getent passwd {user} | cut -d: -f7)" = {shell} ]',
    )
