"""Hostile replies in the OS sandbox, on a real Docker engine and a real OCI runtime: the judge
trusts nothing in the agent's container, timeouts end every process of the agent, and nothing
is left behind.

Each probe acts as an RL policy searching for a reward hack: doing nothing plus the attack
must score 0, solving plus the attack must still score 1.
"""

from __future__ import annotations

import pytest

from lifelong_gym.docker_engine import docker_client
from lifelong_gym.envs.os import LifelongOSEnv
from lifelong_gym.envs.os.backends.docker import LABEL
from lifelong_gym.envs.os.backends.oci.sandbox import OciPool, find_runtime
from lifelong_gym.envs.os.backends.shell import Mode
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.envs.os.tasks import AnswerCheck, Checker, OSTask, ScriptItem
from lifelong_gym.tasks import TaskSet

FILE, PYTHON, USERS, EXAMPLE, SCRIPT = range(5)
TASKS = TaskSet(
    [
        OSTask(
            index=FILE,
            instruction="Write yes into /root/done.txt.",
            evaluation=ScriptItem(script='[ "$(cat /root/done.txt 2>&1)" = yes ]'),
            ground_truth=ScriptItem(script="echo yes > /root/done.txt"),
        ),
        OSTask(
            index=PYTHON,
            instruction="Write 42 into /tmp/answer.",
            evaluation=ScriptItem(
                language="python",
                script="import sys; sys.exit(open('/tmp/answer').read().strip() != '42')",
            ),
            ground_truth=ScriptItem(script="echo 42 > /tmp/answer"),
        ),
        OSTask(
            index=USERS,
            instruction="Add user judy to the group media as well.",
            initialization=ScriptItem(
                script="groupadd ops; groupadd media; useradd -m -G ops judy"
            ),
            evaluation=ScriptItem(
                script="id -nG judy | grep -qw media && id -nG judy | grep -qw ops"
            ),
            ground_truth=ScriptItem(script="usermod -aG media judy"),
        ),
        OSTask(
            index=EXAMPLE,
            instruction="What number does the example print?",
            ground_truth=ScriptItem(script="sleep 0.5; echo 42"),
            answer_check=AnswerCheck(
                checkers=(Checker(kind="example"), Checker(kind="string-match"))
            ),
        ),
        OSTask(
            index=SCRIPT,
            instruction="Write a bash script /root/three.sh that prints 3.",
            evaluation=ScriptItem(script='[ "$(bash /root/three.sh)" = 3 ]'),
            ground_truth=ScriptItem(script="echo 'echo 3' > /root/three.sh"),
        ),
    ]
)
# Replacing the programs an evaluation runs, and every way to put others on its PATH.
SABOTAGE = """
for tool in bash python3 grep id cat env test stat; do ln -sf /bin/true /usr/bin/$tool; done
echo /nonexistent/evil.so > /etc/ld.so.preload
mkdir -p /tmp/fake && ln -sf /bin/true /tmp/fake/grep
for rc in /etc/profile /etc/bash.bashrc /root/.bashrc /root/.profile; do
    echo 'export PATH=/tmp/fake:$PATH BASH_ENV=/root/.bashrc' >> $rc
done
echo 'PATH=/tmp/fake' >> /etc/environment
"""


def hostile_env(kind: str, **options):
    """An environment of TASKS on the sandbox `kind` (a skip where it cannot run); after its
    test module, it is closed and must have left nothing."""
    try:
        client = docker_client()  # the OCI sandbox's root file system is exported from its image
        client.images.get(DEFAULT_IMAGE)
        if kind == "oci":
            find_runtime(None)
    except Exception as error:  # noqa: BLE001 - no engine, image or runtime: skip with the reason
        pytest.skip(f"no {kind} sandbox with {DEFAULT_IMAGE}: {error}")
    environment = LifelongOSEnv(
        TASKS, sandbox=kind, pool_size=2, command_timeout=3, max_turns=10, **options
    )
    pool = environment.pool
    yield environment
    environment.close()
    if isinstance(pool, OciPool):
        assert not pool.run_dir.exists()
    else:
        assert client.containers.list(all=True, filters={"label": f"{LABEL}={pool.run_id}"}) == []


@pytest.fixture(scope="module", params=["docker", "oci"])
def env(request):
    yield from hostile_env(request.param)


def play(env: LifelongOSEnv, index: int, *scripts: str, end: str = "Act: finish"):
    """Run `scripts` as the agent's turns on task `index`, then `end`; return reward, texts."""
    env.reset(options={"task_index": index})
    texts = []
    for script in scripts:
        observation, _, terminated, truncated, _ = env.step(f"Act: bash\n\n```bash\n{script}\n```")
        assert not (terminated or truncated), observation
        texts.append(observation)
    _, reward, terminated, _, info = env.step(end)
    assert terminated and info["status"] == "completed"
    return reward, texts


def solution(index: int) -> str:
    """The task's reference solution as a script."""
    item = TASKS[index].ground_truth
    assert item is not None
    return item.script


@pytest.mark.timeout(300)
@pytest.mark.parametrize("index", [FILE, PYTHON, USERS])
def test_replaced_programs_and_paths_do_not_fool_the_judge(env, index):
    reward, _ = play(env, index, SABOTAGE)
    assert reward == 0.0  # doing nothing, however the container was rigged
    reward, _ = play(env, index, solution(index), SABOTAGE)
    assert reward == 1.0  # and the rigging does not break the judge either


@pytest.mark.timeout(300)
def test_the_judge_survives_a_killed_shell_and_a_replaced_setsid(env):
    script = "ln -sf /bin/true /usr/bin/setsid; ln -sf /bin/true /usr/bin/bash; kill -9 -1"
    reward, _ = play(env, FILE, solution(FILE), script)
    assert reward == 1.0
    reward, _ = play(env, FILE, script)
    assert reward == 0.0


@pytest.mark.timeout(300)
def test_a_timeout_ends_processes_that_left_the_session(env):
    ticking = (
        "ln -sf /bin/true /usr/bin/pkill; ln -sf /bin/true /usr/bin/pgrep; "
        "ln -sf /bin/true /usr/bin/kill; "
        "setsid bash -c 'while :; do echo x >> /tmp/tick; sleep 0.1; done' & "
        "nohup setsid sleep 1000 & sleep 100"
    )
    check = (
        "sleep 0.5; a=$(wc -l < /tmp/tick); sleep 0.5; b=$(wc -l < /tmp/tick); "
        '[ "$a" = "$b" ] && echo stopped; ps -e -o comm= | grep -c sleep'
    )
    _, texts = play(env, FILE, ticking, check)
    assert "did not finish within 3 s" in texts[0]
    assert "processes killed" in texts[0] or "container was restarted" in texts[0]
    assert "stopped" in texts[1] and texts[1].rstrip().endswith("\n1")  # only `sleep 0.5`s gone


@pytest.mark.timeout(300)
def test_a_process_left_running_cannot_disturb_the_judge(env):
    killer = "setsid bash -c 'while :; do pkill -9 -f \"lifelong[-]gym\"; done' >/dev/null 2>&1 &"
    reward, _ = play(env, EXAMPLE, killer, end="Act: answer()")
    assert reward == 0.0  # the example still ran: an empty answer is not its output
    reward, _ = play(env, EXAMPLE, killer, end="Act: answer(42)")
    assert reward == 1.0


@pytest.mark.timeout(300)
def test_processes_holding_every_slot_do_not_stop_the_judge(env):
    # every process slot held by sleepers that left the agent's session
    bomb = "setsid bash -c 'for i in $(seq 300); do sleep 1000 & done' >/dev/null 2>&1 & sleep 2"
    reward, _ = play(env, FILE, solution(FILE), bomb)
    assert reward == 1.0


@pytest.mark.timeout(300)
def test_the_judges_toolset_cannot_be_written_or_moved(env):
    attempts = (
        "echo x > /.lgj/usr/bin/bash; rm -f /.lgj/ld.so; mv /.lgj /tmp/moved; "
        "umount /.lgj; mount -o remount,rw /.lgj; touch /.lgj/new; true"
    )
    reward, texts = play(env, FILE, solution(FILE), attempts)
    assert reward == 1.0
    assert texts[1].count("Read-only file system") >= 3
    assert "Device or resource busy" in texts[1] or "Read-only" in texts[1]


# Each line prints ESCAPED-... only if the attempt to reach past the container worked; the
# attempts are harmless if they did (sysrq `h` prints its help, drop_caches empties caches).
ESCAPES = """
echo h > /proc/sysrq-trigger && echo ESCAPED-sysrq
echo 3 > /proc/sys/vm/drop_caches && echo ESCAPED-proc-sys
mount -t tmpfs x /mnt && echo ESCAPED-mount
mount -o remount,rw /sys && echo ESCAPED-sys-rw
for f in /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max; do
    [ -e $f ] && echo 4000000000 > $f && echo ESCAPED-memory-limit
done
for f in /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max; do
    [ -e $f ] && echo max > $f && echo ESCAPED-pids-limit
done
unshare -Urm true && echo ESCAPED-user-namespace
[ "$(head -c 1 /proc/kcore 2>/dev/null | wc -c)" = 1 ] && echo ESCAPED-kcore
timeout 2 bash -c 'echo > /dev/tcp/127.0.0.1/3306' 2>/dev/null && echo ESCAPED-host-loopback
ls /sys/class/net
"""


@pytest.mark.timeout(300)
def test_proc_sys_mount_and_network_do_not_reach_the_host(env):
    reward, texts = play(env, FILE, ESCAPES)
    assert reward == 0.0
    assert "ESCAPED" not in texts[0], texts[0]
    assert texts[0].rstrip().endswith("lo")  # the only network interface: its own loopback


# Writes `{line}` to the standard input of every process, the judge's shell among them: once
# now, and (in the background) every 10 ms until the agent's processes are ended.
WRITE_TO_EVERY_INPUT = """printf '%s\\n' '{line}' > /tmp/line
echo 'for f in /proc/[0-9]*/fd/0; do cat /tmp/line > $f; done' > /tmp/write
. /tmp/write
setsid bash -c 'while sleep 0.01; do . /tmp/write; done' >/dev/null 2>&1 &"""


@pytest.mark.timeout(300)
def test_a_command_written_to_the_judges_input_does_not_run(env):
    env.reset(options={"task_index": FILE})
    sandbox = env.unwrapped.sandbox
    written = WRITE_TO_EVERY_INPUT.format(line="touch /tmp/injected-$$")  # the shell's pid
    env.step(f"Act: bash\n\n```bash\n{written}\n```")
    # a judge's shell started while the agent's loop runs (as for the killer after a limit)
    judge_pid = sandbox.run_judged("echo $$", Mode.PERSISTENT, timeout=10, limit=100).output
    observation, *_ = env.step("Act: bash\n\n```bash\n. /tmp/write; sleep 0.2\n```")
    # the judge's next command would run the line first, had it been queued
    check = sandbox.run_judged(
        f"test -e /tmp/injected-{judge_pid.strip()}", Mode.PERSISTENT, timeout=10, limit=100
    )
    assert check.exit_code == 1
    assert f"/proc/{judge_pid.strip()}/fd/0: Permission denied" in observation
    _, reward, *_ = env.step("Act: finish")
    assert reward == 0.0


# The agent's script, which the evaluation runs: it looks for the judge's markers (the
# random word that ends each of its commands' output) in the memory of every process it
# may read, and prints each with a status of 0 where the judge reads its output.
FAKE_THE_JUDGES_STATUS = r"""cat > /root/fake.py <<'EOF'
import os, re, sys
found = set()
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        regions = open(f"/proc/{pid}/maps").read().splitlines()
        memory = open(f"/proc/{pid}/mem", "rb", 0)
    except OSError:
        continue
    for region in regions:
        span, permissions = region.split()[:2]
        if permissions.startswith("rw"):
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                memory.seek(start)
                found.update(re.findall(rb"%s\\n' ([0-9a-f]{16})", memory.read(end - start)))
            except (OSError, OverflowError, ValueError):
                pass
for marker in found:
    sys.stderr.write(f"\n{marker.decode()}:0::\n")
sys.stderr.write(f"markers found: {len(found)}\n")
print(4)
EOF
echo 'python3 /root/fake.py' > /root/three.sh"""


@pytest.mark.timeout(300)
def test_a_script_the_evaluation_runs_cannot_fake_the_judges_status(env):
    """The evaluation runs the agent's script, which could read the judge's memory and
    so learn the marker that ends its output, had it the judge's capabilities: it runs
    without them, finds no marker, and the task scores 0."""
    reward, _ = play(env, SCRIPT, FAKE_THE_JUDGES_STATUS)
    assert reward == 0.0
    reward, _ = play(env, SCRIPT, solution(SCRIPT))
    assert reward == 1.0


@pytest.mark.timeout(300)
def test_no_process_the_agent_may_not_read_runs_beside_its_commands(env):
    """No judge's shell runs while the agent's commands do, from the first one to one after
    a time limit (whose killer ran in a judge's shell): `find /` prints no `Permission
    denied`, as in AgentBench's container."""
    listing = "find /proc -maxdepth 2 -name nothing-here; echo listed"
    reward, texts = play(env, FILE, listing, "sleep 100", listing, solution(FILE))
    for text in texts[0], texts[2]:
        assert "denied" not in text and text.rstrip().endswith("\n\nlisted"), text
    assert "did not finish within 3 s" in texts[1]
    assert reward == 1.0


@pytest.mark.timeout(300)
@pytest.mark.parametrize("index", [FILE, PYTHON])
def test_functions_written_to_the_judges_input_do_not_score(env, index):
    # a `bash` or `python3` that succeeds, and a killer that kills nothing
    line = "bash() { return 0; }; python3() { return 0; }; __lg_kill() { echo 0; }"
    reward, _ = play(env, index, WRITE_TO_EVERY_INPUT.format(line=line))
    assert reward == 0.0
    reward, _ = play(env, index, solution(index), WRITE_TO_EVERY_INPUT.format(line=line))
    assert reward == 1.0
