"""RayVectorEnv on a local multi-node Ray cluster (a head and two workers, one with Docker).

The real parts: Ray's `Cluster` (separate raylets on this machine), MariaDB and the Docker
engine. One cluster serves the whole module; the test that kills a node runs last.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import gymnasium as gym
import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="needs Ray: pip install 'lifelong-gym[ray]'")

from gymnasium.vector import AutoresetMode  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import lifelong_gym  # noqa: E402, F401 - registers the ids
from lifelong_gym.agents import OracleAgent  # noqa: E402
from lifelong_gym.distributed import RayVectorEnv  # noqa: E402
from lifelong_gym.envs.db.actions import operation_reply  # noqa: E402
from lifelong_gym.envs.db.backends.mysql.backend import PREFIX, parse_url  # noqa: E402
from lifelong_gym.envs.db.tasks import load_db_tasks  # noqa: E402
from lifelong_gym.envs.os.backends.docker import LABEL, LABEL_PID  # noqa: E402
from lifelong_gym.envs.os.tasks import load_os_tasks  # noqa: E402
from lifelong_gym.errors import BackendError  # noqa: E402
from lifelong_gym.processes import process_alive  # noqa: E402

from ..envs.db_fixtures import task_file  # noqa: E402

ANSWER_NOTHING = "Action: Answer\nFinal Answer: []"
SLEEPERS = "SELECT USER FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP%%'"


@pytest.fixture(scope="module")
def cluster():
    """A head (no Docker), a plain worker and a worker offering the `docker` resource."""
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 4, "include_dashboard": False}
    )
    plain = cluster.add_node(num_cpus=4)
    docker = cluster.add_node(num_cpus=4, resources={"docker": 2})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address)
    yield cluster, plain, docker
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture
def mysql_env(mysql_url):
    return {"backend": "mysql", "url": mysql_url}


def play_oracle(envs: RayVectorEnv, tasks, episodes: int, seed: int) -> list[float]:
    """The oracle's episodes on every sub-environment until each finished `episodes`."""
    oracle = OracleAgent(tasks)
    next_step = envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    envs.reset(seed=seed)
    rewards: list[float] = []
    finished = np.zeros(envs.num_envs, dtype=int)
    resetting = np.zeros(envs.num_envs, dtype=bool)
    while finished.min() < episodes:
        sessions = envs.call("session")
        actions = tuple("" if resetting[i] else oracle.act(s) for i, s in enumerate(sessions))
        _, reward, terminated, truncated, info = envs.step(actions)
        assert "env_error" not in info
        ended = (terminated | truncated) & ~resetting
        rewards += [float(r) for r in reward[ended]]
        finished += ended
        resetting = ended if next_step else resetting
    return rewards


def leftovers(pids: set[int], mysql_url: str) -> dict[str, list]:
    """Databases, accounts and containers still owned by any of `pids`."""
    import pymysql

    import docker

    def owned(name: str) -> bool:
        parts = name[len(PREFIX) :].split("_")
        return len(parts) > 1 and parts[1].isdigit() and int(parts[1]) in pids

    connection = pymysql.connect(**parse_url(mysql_url))
    with connection.cursor() as cursor:
        cursor.execute("SHOW DATABASES LIKE %s", (f"{PREFIX}%",))
        databases = [name for (name,) in cursor.fetchall() if owned(name)]
        cursor.execute("SELECT User FROM mysql.user WHERE User LIKE %s", (f"{PREFIX}%",))
        accounts = [name for (name,) in cursor.fetchall() if owned(name)]
    connection.close()
    client = docker.from_env()
    containers = [
        c["Id"]
        for c in client.api.containers(all=True, filters={"label": LABEL})
        if int(c["Labels"].get(LABEL_PID, "0")) in pids
    ]
    return {"databases": databases, "accounts": accounts, "containers": containers}


def wait_gone(pids: set[int]) -> set[int]:
    """The actor processes among `pids` that are still alive after up to a minute."""
    alive = set(pids)
    for _ in range(600):
        alive = {pid for pid in alive if process_alive(pid)}
        if not alive:
            break
        threading.Event().wait(0.1)
    return alive


def test_importing_the_suite_does_not_import_ray():
    code = "import sys, lifelong_gym; print('ray' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert output.stdout.strip() == "False", output.stderr


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_steps_like_gymnasiums_sync_vector_env(cluster, tmp_path, mode):
    tasks = str(task_file(tmp_path))
    kwargs = {"tasks": tasks, "max_turns": 2}
    ours = RayVectorEnv("LifelongDB-v0", 3, kwargs, autoreset_mode=mode)
    theirs = gym.make_vec(
        "LifelongDB-v0", 3, "sync", vector_kwargs={"autoreset_mode": mode}, **kwargs
    )
    script = [
        (ANSWER_NOTHING, operation_reply("SELECT 1;"), operation_reply("SELECT 2;")),
        (operation_reply("SELECT 3;"), ANSWER_NOTHING, operation_reply("SELECT 4;")),
        (ANSWER_NOTHING, ANSWER_NOTHING, ANSWER_NOTHING),
        (operation_reply("SELECT 5;"), ANSWER_NOTHING, operation_reply("SELECT 6;")),
    ]
    try:
        assert ours.metadata["autoreset_mode"] == mode
        assert ours.single_observation_space == theirs.single_observation_space
        assert repr(ours.reset(seed=7)) == repr(theirs.reset(seed=7))
        for actions in script:
            assert repr(ours.step(actions)) == repr(theirs.step(actions))
        options = {"reset_mask": np.array([False, True, False]), "task_index": 12}
        assert repr(ours.reset(options=options)) == repr(theirs.reset(options=options))
    finally:
        ours.close()
        theirs.close()


def test_per_sub_environment_options_and_disabled_autoreset(cluster, tmp_path):
    envs = RayVectorEnv(
        "LifelongDB-v0", 2, {"tasks": str(task_file(tmp_path))}, autoreset_mode="Disabled"
    )
    try:
        _, info = envs.reset(options=[{"task_index": 11}, {"task_index": 10}])
        assert list(info["task_index"]) == [11, 10]
        envs.step((ANSWER_NOTHING, operation_reply("SELECT 1;")))
        with pytest.raises(gym.error.ResetNeeded, match=r"\[0\]"):
            envs.step((operation_reply("SELECT 1;"),) * 2)
        _, info = envs.reset(options={"reset_mask": np.array([True, False]), "task_index": 12})
        assert list(info["_task_index"]) == [True, False] and info["task_index"][0] == 12
    finally:
        envs.close()


def test_an_environment_that_cannot_be_built_is_one_clear_error(cluster):
    with pytest.raises(BackendError, match="cannot be built in a Ray actor: .*backend"):
        RayVectorEnv("LifelongDB-v0", 1, {"backend": "nosuchdb"})


def test_four_db_and_two_os_envs_play_oracle_episodes_to_full_marks(
    cluster, mysql_env, mysql_url, os_image
):
    _, _, docker_node = cluster
    db = RayVectorEnv("LifelongDB-v0", 4, mysql_env, autoreset_mode=AutoresetMode.SAME_STEP)
    shell = RayVectorEnv("LifelongOS-v0", 2, {"pool_size": 1}, resources={"docker": 1})
    pids = {p.pid for p in db.placements + shell.placements}
    try:
        assert len({p.node_id for p in db.placements}) >= 2  # spread across the nodes
        assert {p.node_id for p in shell.placements} == {docker_node.node_id}
        assert play_oracle(db, load_db_tasks(), episodes=2, seed=0) == [1.0] * 8
        assert play_oracle(shell, load_os_tasks(), episodes=2, seed=0) == [1.0] * 4
        assert leftovers(pids, mysql_url)["containers"]  # each OS actor holds containers
    finally:
        db.close()
        shell.close()
    assert wait_gone(pids) == set()
    assert leftovers(pids, mysql_url) == {"databases": [], "accounts": [], "containers": []}


def test_a_step_past_the_time_limit_is_truncated_and_its_actor_replaced(
    cluster, mysql_env, mysql_url
):
    kwargs = {**mysql_env, "statement_timeout": 60}
    envs = RayVectorEnv(
        "LifelongDB-v0", 2, kwargs, step_timeout=3, autoreset_mode=AutoresetMode.SAME_STEP
    )
    first = list(envs.placements)
    try:
        envs.reset(seed=1)
        actions = (operation_reply("SELECT SLEEP(30);"), operation_reply("SELECT 1;"))
        obs, reward, terminated, truncated, info = envs.step(actions)
        assert list(truncated) == [True, False] and list(terminated) == [False, False]
        assert "step time limit (3 s)" in info["env_error"][0] and not info["_env_error"][1]
        assert info["final_info"]["env_error"][0] == info["env_error"][0]
        assert obs[1] == "[(1,)]"
        assert obs[0] == envs.call("session")[0].chat_history[0].content  # the next task
        assert envs.placements[0].pid != first[0].pid and envs.placements[1] == first[1]
    finally:
        envs.close()
    pids = {p.pid for p in first + envs.placements}
    assert wait_gone(pids) == set()
    assert leftovers(pids, mysql_url)["databases"] == []


def test_losing_a_node_mid_step_truncates_its_sub_environments_only(cluster, mysql_env, mysql_url):
    head, plain_node, _ = cluster
    envs = RayVectorEnv("LifelongDB-v0", 4, mysql_env)
    first = list(envs.placements)
    lost = [i for i, p in enumerate(first) if p.node_id == plain_node.node_id]
    assert lost and len(lost) < 4
    envs.reset(seed=2)
    stepped: list = []
    stepping = threading.Thread(
        target=lambda: stepped.append(envs.step((operation_reply("SELECT SLEEP(3);"),) * 4))
    )
    try:
        stepping.start()
        wait_for_sleeps({p.pid for p in first}, mysql_url)
        head.remove_node(plain_node, allow_graceful=False)
        stepping.join()
        _, _, terminated, truncated, info = stepped[0]
        assert list(truncated) == [i in lost for i in range(4)] and not terminated.any()
        for i in range(4):
            assert bool(info["_env_error"][i]) == (i in lost)
        assert "actor was lost" in info["env_error"][lost[0]]
        assert all(envs.placements[i].node_id != plain_node.node_id for i in range(4))
        assert play_oracle(envs, load_db_tasks(), episodes=1, seed=3) == [1.0] * 4
    finally:
        envs.close()
    pids = {p.pid for p in first + envs.placements}
    assert wait_gone(pids) == set()
    assert leftovers(pids, mysql_url) == {"databases": [], "accounts": [], "containers": []}


def wait_for_sleeps(pids: set[int], mysql_url: str) -> None:
    """Wait until every actor in `pids` is inside its `SLEEP` statement on the server."""
    import pymysql

    connection = pymysql.connect(autocommit=True, **parse_url(mysql_url))
    try:
        for _ in range(600):
            with connection.cursor() as cursor:
                cursor.execute(SLEEPERS)
                owners = {int(user[len(PREFIX) :].split("_")[1]) for (user,) in cursor.fetchall()}
            if pids <= owners:
                return
            threading.Event().wait(0.05)
        raise AssertionError(f"the actors {pids - owners} never started their statement")
    finally:
        connection.close()
