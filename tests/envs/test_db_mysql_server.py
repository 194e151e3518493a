"""`backend="mysql"` without a url: the MariaDB container the environment starts, shared, removed.

On the real Docker engine with the image `lifelong-gym/mysql:latest`
(`lifelong-gym build-image mysql`); skipped with the reason where either is absent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import pymysql
import pytest
import yaml
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.cli import main
from lifelong_gym.envs.db.actions import operation_reply
from lifelong_gym.envs.db.backends import make_backend
from lifelong_gym.envs.db.backends.mysql import server as mysql_server
from lifelong_gym.envs.db.backends.mysql.backend import parse_url
from lifelong_gym.envs.db.backends.mysql.server import server_containers
from lifelong_gym.errors import BackendError

from .db_fixtures import solve, task_file
from .test_db_bad_input import (  # noqa: F401 - the url case's hostile-input suite, run here
    TIMEOUT,
    test_hostile_statement_is_an_observation_and_next_task_is_clean,
)
from .test_db_tasks import AGENTBENCH_LABEL_MISMATCH, _agentbench_write_tasks, _matches


@pytest.fixture(scope="module")
def engine(docker_engine, mysql_image, tmp_path_factory):
    """The engine with the server image, and a temporary folder (so a lease folder) of our own.

    The lease folder is part of the server's label, so the servers of these tests are
    apart from those of any other process of this user on the host (another checkout's
    tests, a run), and every count below is of ours only. The processes the tests start
    inherit the folder through TMPDIR.
    """
    temporary = Path(os.path.abspath(tmp_path_factory.mktemp("tmpdir")))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(temporary))
        patch.setattr(mysql_server, "LEASES", temporary / mysql_server.LEASES.name)
        yield docker_engine
        assert server_containers(docker_engine) == [], "a server container outlived its users"


def make_started(tmp_path: Path, **kwargs):
    """A DB env on the started server, over the small hand-checked task file."""
    return gym.make("LifelongDB-v0", tasks=str(task_file(tmp_path)), backend="mysql", **kwargs)


@pytest.fixture
def env(engine, tmp_path):
    """The hostile-input suite's environment, on the started server."""
    env = make_started(
        tmp_path, statement_timeout=TIMEOUT, max_rows=100, max_observation_length=2_000
    )
    yield env
    env.close()


def running_ids(client) -> list[str]:
    return [c.id for c in server_containers(client) if c.status == "running"]


def leases_of(container_id: str) -> set[int]:
    return {int(p.suffix[1:]) for p in mysql_server.LEASES.glob(f"{container_id[:12]}.*")}


def test_missing_image_is_one_clear_line(docker_engine):
    with pytest.raises(BackendError) as caught:
        make_backend("mysql", image="lifelong-gym/no-such-mysql:latest")
    message = str(caught.value)
    assert "\n" not in message
    assert "build-image mysql --name lifelong-gym/no-such-mysql:latest" in message
    dockerfile = "docker build -t lifelong-gym/no-such-mysql:latest -f docker/mysql/Dockerfile ."
    assert dockerfile in message


def test_oracle_scores_every_shipped_task_on_the_started_server(engine):
    env = gym.make("LifelongDB-v0", backend="mysql").unwrapped
    assert server_containers(engine) == []  # nothing starts before the first task
    wrong = [i for i in env.tasks.order if solve(env, i)["outcome"] != "correct"]
    url = env.backend.url
    assert ":3306" not in url and url.startswith("mysql://root:")
    assert len(running_ids(engine)) == 1
    env.close()
    assert wrong == []
    assert server_containers(engine) == []


def test_the_server_keeps_its_data_on_a_tmpfs(engine, tmp_path):
    env = make_started(tmp_path)
    env.reset(options={"task_index": 10})
    (container,) = server_containers(engine)
    # the engine's record of the container's tmpfs mounts (not `exec_run(["cat",
    # "/proc/mounts"])`: the docker SDK can lose a fast command's output, docker/docker-py#3332)
    container.reload()
    tmpfs = container.attrs["HostConfig"].get("Tmpfs") or {}
    admin = pymysql.connect(**parse_url(env.unwrapped.backend.url))
    with admin.cursor() as cursor:
        cursor.execute("SELECT @@datadir")
        ((datadir,),) = cursor.fetchall()
    admin.close()
    env.close()
    assert datadir.rstrip("/") == "/var/lib/mysql" and datadir.rstrip("/") in tmpfs


def test_agentbench_hashes_on_the_started_server(engine, external_dir):
    tasks = _agentbench_write_tasks(external_dir)
    matched = _matches(make_backend("mysql", sql_mode=""), tasks)
    assert {t.index for t in tasks} - matched == AGENTBENCH_LABEL_MISMATCH


def test_agent_account_sees_only_its_database(env):
    env.reset(options={"task_index": 10})
    obs, *_ = env.step(operation_reply("SHOW DATABASES;"))
    names = {n for (n,) in eval(obs)}  # noqa: S307 - the observation is a list of tuples we printed
    assert len(names) == 2 and "information_schema" in names
    obs, *_ = env.step(operation_reply("SELECT CURRENT_USER();"))
    assert "root" not in obs and "lgym_" in obs


def test_envs_of_one_process_share_one_container_and_the_last_removes_it(engine, tmp_path):
    first, second = make_started(tmp_path), make_started(tmp_path)
    first.reset(options={"task_index": 10})
    second.reset(options={"task_index": 11})
    assert first.unwrapped.backend.url == second.unwrapped.backend.url
    (container,) = running_ids(engine)
    assert leases_of(container) == {os.getpid()}
    first.close()
    assert running_ids(engine) == [container]
    obs, *_ = second.step(operation_reply("SELECT COUNT(*) FROM `shop items`;"))
    assert obs == "[(3,)]"
    second.close()
    assert server_containers(engine) == [] and leases_of(container) == set()


def test_four_async_workers_share_one_container(engine, tmp_path):
    tasks = str(task_file(tmp_path))
    fns = [lambda: gym.make("LifelongDB-v0", tasks=tasks, backend="mysql") for _ in range(4)]
    envs = gym.vector.AsyncVectorEnv(fns, shared_memory=False)
    obs, _ = envs.reset(seed=3, options={"task_index": 10})
    (container,) = running_ids(engine)
    workers = leases_of(container)
    assert len(workers) == 4 and os.getpid() not in workers
    sql = "SELECT name FROM `shop items` WHERE price > 5 ORDER BY price DESC;"
    obs, *_ = envs.step([operation_reply(sql)] * 4)
    assert list(obs) == ["[('coffee',), ('cocoa',)]"] * 4
    _, reward, terminated, _, _ = envs.step([f"Action: Answer\nFinal Answer: {o}" for o in obs])
    assert list(reward) == [1.0] * 4 and all(terminated)
    envs.close()
    assert server_containers(engine) == []


HOLDER = """
import sys, gymnasium as gym, lifelong_gym
env = gym.make("LifelongDB-v0", tasks=sys.argv[1], backend="mysql")
env.reset(options={"task_index": 10})
print(env.unwrapped.backend.url, flush=True)
sys.stdin.read()
"""


def start_holder(tmp_path: Path, **environment: str) -> tuple[subprocess.Popen, str]:
    """Another process holding an environment on the server; returns it and its URL."""
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(task_file(tmp_path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **environment},
    )
    return holder, holder.stdout.readline().strip()


def test_a_server_used_by_a_live_process_stays_and_a_killed_runs_is_removed(engine, tmp_path):
    holder, url = start_holder(tmp_path)
    (container,) = running_ids(engine)
    env = make_started(tmp_path)
    env.reset(options={"task_index": 10})
    assert env.unwrapped.backend.url == url  # joined the other process's server
    env.close()
    assert running_ids(engine) == [container]  # its other user still runs
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert running_ids(engine) == [container]  # nobody removed it: it is a leftover now
    env = make_started(tmp_path)
    env.reset(options={"task_index": 11})
    assert container not in [c.id for c in server_containers(engine)]
    assert len(running_ids(engine)) == 1 and env.unwrapped.backend.url != url
    env.close()
    assert server_containers(engine) == []


def test_a_process_with_another_temporary_folder_neither_joins_nor_removes_it(engine, tmp_path):
    """It cannot see this folder's leases, so it must not take our server for a leftover."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    holder, url = start_holder(tmp_path, TMPDIR=str(elsewhere))
    try:
        servers = engine.containers.list(filters={"label": mysql_server.LABEL})
        (theirs,) = [c for c in servers if c.labels[mysql_server.LABEL_PASSWORD] in url]
        env = make_started(tmp_path)
        env.reset(options={"task_index": 10})
        assert env.unwrapped.backend.url != url and len(running_ids(engine)) == 1
        env.close()
        theirs.reload()
        assert theirs.status == "running"  # its user still runs
    finally:
        holder.communicate("")  # the holder closes its environment and exits
    assert holder.returncode == 0
    assert engine.containers.list(all=True, filters={"id": theirs.id}) == []


def test_cli_and_yaml_start_the_server(engine, tmp_path):
    tasks = str(task_file(tmp_path))
    args = ["run", "--tasks", tasks, "--env-arg", "backend=mysql", "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--output", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    config = tmp_path / "run.yaml"
    run = {"tasks": tasks, "output": str(tmp_path / "yaml"), "env_args": {"backend": "mysql"}}
    config.write_text(yaml.safe_dump(run))
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--no-progress"])
    assert result.exit_code == 0, result.output
    for folder in ("cli", "yaml"):
        metrics = json.loads((tmp_path / folder / "metrics.json").read_text())
        assert metrics["success_rate"] == 1.0 and metrics["status_counts"] == {"completed": 3}
    assert server_containers(engine) == []
