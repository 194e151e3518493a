"""Ending the agent's processes by the container's process list, with no program of its own.

The functions below are defined in the judge's shell (the toolset's bash) and use only
bash builtins: reading /proc by glob and `read`, and the `kill` builtin. They need no
program from the container (the agent may have replaced `pkill`, `pgrep`, `kill`, `ps`),
no new process (they work while a fork bomb holds every process slot), and they reach
processes that left the agent's session (`setsid`, double forks). Every process that was
not running when the task was set up is the agent's; each round stops them all (SIGSTOP:
a stopped process cannot fork), then kills them, until a round finds none.
"""

from __future__ import annotations

# `__lg_pids`: the pids now running. `__lg_kill KEEP...`: kill all others but PID 1 and this
# shell; prints how many it killed, and fails if processes still came back after 12 rounds.
FUNCTIONS = r"""
__lg_pids() { local p out=""; for p in /proc/[0-9]*; do out+="${p#/proc/} "; done; echo "$out"; }
__lg_others() {
    local p line; __lg_found=()
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [[ $__lg_keep == *" $p "* ]] && continue
        read -r line 2>&- < "/proc/$p/stat" || continue
        [[ ${line##*) } == Z* ]] && continue
        __lg_found+=("$p")
    done
}
__lg_kill() {
    local round p killed=0; __lg_keep=" 1 $$ $* "
    for round in 1 2 3 4 5 6 7 8 9 10 11 12; do
        __lg_others
        if (( ${#__lg_found[@]} == 0 )); then echo "$killed"; return 0; fi
        for p in "${__lg_found[@]}"; do kill -STOP "$p" 2>&-; done
        __lg_others
        for p in "${__lg_found[@]}"; do kill -KILL "$p" 2>&- && killed=$((killed + 1)); done
    done
    echo "$killed"; return 1
}
"""


def kill_command(keep: frozenset[int]) -> str:
    """The judge-shell command that kills every process but `keep`."""
    return "__lg_kill " + " ".join(str(pid) for pid in sorted(keep))


def parse_pids(output: str) -> frozenset[int]:
    """The pids printed by `__lg_pids`."""
    return frozenset(int(word) for word in output.split() if word.isdigit())
