"""verifiers 0.4: the suite's environments as verifiers environments, run by `vf-eval`.

Real parts: verifiers' own evaluation entry point (`vf-eval` of verifiers 0.4.0, in the
venv .ci/setup.d/56-verifiers.sh makes: verifiers needs openai<3 and mcp 2.0, which the
main environment cannot hold), its tool-less `null` harness (its chat program in a uv
environment), on this checkout's code; the models are the test chat server replying with
each task's reference solution, and llama.cpp's OpenAI-compatible server on SmolLM2; the
DB back-ends are the embedded SQLite and the MariaDB server.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lifelong_gym.registration import make_env
from lifelong_gym.session import ChatMessage, Role

from ..agents.chat_server import ChatServer, Reply
from ..agents.conftest import chat_server, llama_server  # noqa: F401 - fixtures
from ..agents.llama_server import MODEL_NAME, LlamaServer
from .openenv_server import task_databases
from .venvs import needs_venv

VF_BIN = Path("/opt/venvs/verifiers/bin")  # made by .ci/setup.d/56-verifiers.sh
ROOT = Path(__file__).resolve().parents[2]
EVAL_SECONDS = 900
ENV = {
    **os.environ,
    "PATH": f"{VF_BIN}:{os.environ['PATH']}",  # the harness finds uv there
    "PYTHONPATH": str(ROOT),  # the checkout's code (and the taskset module at its root)
    "PRIME_API_KEY": "unused",  # the eval client reads its key from there
}


pytestmark = needs_venv(
    VF_BIN / "python",
    "import verifiers.v1; from importlib.metadata import version as v; "
    "assert v('verifiers').startswith('0.4.'); import shutil; assert shutil.which('uv')",
    "verifiers 0.4 and uv",
    "56-verifiers.sh",
    env=ENV,
)


def vf_eval(
    base_url: str,
    out: Path,
    *,
    env_id: str,
    count: int,
    env_kwargs: dict[str, Any] | None = None,
    model: str = "m",
    flags: tuple[str, ...] = (),
    pid: list[int] | None = None,
) -> list[dict[str, Any]]:
    """`vf-eval` of the first `count` tasks, one rollout at a time; the episodes it wrote."""
    command = [
        str(VF_BIN / "vf-eval"),
        "lifelong-gym-verifiers",
        "--env.taskset.env-id",
        env_id,
        "--env.taskset.env-kwargs",
        json.dumps(env_kwargs or {}),
        "-m",
        model,
        "--client.base-url",
        base_url,
        "-n",
        str(count),
        "-c",
        "1",  # llama.cpp's server serves one request at a time
        "--no-push",
        "--no-rich",
        "-o",
        str(out),
        *flags,
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV
    )
    if pid is not None:
        pid.append(process.pid)
    output, _ = process.communicate(timeout=EVAL_SECONDS)
    assert process.returncode == 0, output[-3000:]
    (traces,) = out.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(episodes) == count, output[-3000:]
    return episodes


def conversation(episode: dict[str, Any]) -> list[dict[str, str]]:
    """The episode's one trace as chat messages, in order."""
    (trace,) = episode["traces"]
    return [node["message"] for node in trace["nodes"]]


class OracleModel:
    """A chat server's reply function: the reference solution's next reply for the task
    whose prompt opens the conversation (a task's prompt is the environment's first
    observation, so it names the task)."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any], count: int):
        env = make_env(env_id, env_kwargs).unwrapped
        self.order = env.tasks.order[:count]
        self.tasks = env.tasks
        self.prompts = {env.reset(options={"task_index": i})[0]: i for i in self.order}
        env.close()

    def __call__(self, request: dict[str, Any]) -> str:
        messages = [m for m in request["messages"] if m["role"] in ("user", "assistant")]
        history = [
            ChatMessage(role=Role.USER if m["role"] == "user" else Role.AGENT, content=m["content"])
            for m in messages
        ]
        return self.tasks[self.prompts[messages[0]["content"]]].oracle_reply(history)


@pytest.mark.parametrize(
    ("env_id", "count"), [("LifelongDB-v0", 4), ("LifelongKG-v0", 3)], ids=["db", "kg"]
)
def test_oracle_replies_score_1_on_every_task(
    env_id: str,
    count: int,
    chat_server: ChatServer,  # noqa: F811 - the fixture
    tmp_path: Path,
):
    if env_id == "LifelongKG-v0":
        pytest.importorskip("pyoxigraph")
    oracle = OracleModel(env_id, {}, count)
    chat_server.default = oracle
    episodes = vf_eval(chat_server.base_url, tmp_path, env_id=env_id, count=count)
    played = []
    for episode in episodes:
        (trace,) = episode["traces"]
        record = trace["info"]["lifelong_gym"]
        assert episode["ok"] and trace["rewards"]["lifelong_reward"]["score"] == 1.0
        assert record["status"] == "completed" and record["outcome"] == "correct"
        assert trace["metrics"] == {"lifelong_correct": 1.0, "lifelong_steps": record["steps"]}
        messages = conversation(episode)
        assert oracle.prompts[messages[0]["content"]] == record["task_index"]
        assert [m["role"] for m in messages[::2]] == ["user"] * len(messages[::2])
        assert sum(m["role"] == "assistant" for m in messages) == record["steps"] >= 1
        played.append(record["task_index"])
    assert played == list(oracle.order)  # the rows are the task set, in lifelong order


def replay(env_id: str, env_kwargs: dict[str, Any], episode: dict[str, Any]) -> dict[str, Any]:
    """The episode's replies stepped in a fresh environment: each observation must be the
    next user message of the trace; the session the environment ends with."""
    (trace,) = episode["traces"]
    messages = conversation(episode)
    env = make_env(env_id, env_kwargs).unwrapped
    try:
        observation, _ = env.reset(
            options={"task_index": trace["info"]["lifelong_gym"]["task_index"]}
        )
        assert messages[0] == {"role": "user", "content": observation}
        for position, message in enumerate(messages[1:], start=1):
            if message["role"] != "assistant":
                continue
            observation, _, terminated, truncated, _ = env.step(message["content"])
            if terminated or truncated:
                assert position == len(messages) - 1  # nothing was sent after the end
                break
            assert messages[position + 1] == {"role": "user", "content": observation}
        return {"reward": env.session.reward, "status": env.session.status.value}
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["LifelongDB-v0", "LifelongKG-v0"], ids=["db", "kg"])
def test_smollm2_through_llama_cpp_is_scored_as_in_process(
    env_id: str,
    llama_server: LlamaServer,  # noqa: F811 - the fixture
    tmp_path: Path,
):
    kwargs = {"max_turns": 3}
    episodes = vf_eval(
        llama_server.base_url, tmp_path, env_id=env_id, count=2, env_kwargs=kwargs, model=MODEL_NAME
    )
    for episode in episodes:
        (trace,) = episode["traces"]
        assert episode["ok"], trace["errors"]
        record = trace["info"]["lifelong_gym"]
        assert trace["rewards"]["lifelong_reward"]["score"] == record["reward"]
        assert replay(env_id, kwargs, episode) == {
            "reward": record["reward"],
            "status": record["status"],
        }


def test_failed_rollouts_close_their_environments(
    chat_server: ChatServer,  # noqa: F811 - the fixture
    mysql_url: str,
    tmp_path: Path,
):
    """Mid-episode, the model answers the first task with an error (the agent's run fails)
    and hangs on the second past the episode's deadline (verifiers cancels the rollout):
    each rollout's task database and account are gone by the next rollout's first
    request, and the third task is played to its end."""
    kwargs = {"backend": "mysql", "url": mysql_url}
    oracle = OracleModel("LifelongDB-v0", kwargs, 3)
    broken, hung, _ = oracle.order
    pid: list[int] = []
    held: dict[int, list[str]] = {}

    def model(request: dict[str, Any]) -> str | Reply:
        messages = request["messages"]
        index = oracle.prompts[messages[0]["content"]]
        held.setdefault(index, task_databases(mysql_url, pid[0]))
        if index == broken and len(messages) > 1:
            return Reply(status=400, content="the model broke")
        if index == hung and len(messages) > 1:
            return Reply(hang=40)
        return oracle(request)

    chat_server.default = model
    episodes = vf_eval(
        chat_server.base_url,
        tmp_path,
        env_id="LifelongDB-v0",
        count=3,
        env_kwargs=kwargs,
        flags=("--env.timeout.episode", "20"),
        pid=pid,
    )
    first, second, third = episodes
    record = first["traces"][0]["info"]["lifelong_gym"]
    assert not first["ok"] and first["traces"][0]["errors"]
    assert record["status"] == "agent_unknown_error" and record["reward"] == 0.0
    assert not second["ok"] and "deadline" in second["errors"][0]["message"]
    assert third["ok"] and third["traces"][0]["rewards"]["lifelong_reward"]["score"] == 1.0
    during = [held[i] for i in oracle.order]
    assert all(during) and len({len(names) for names in during}) == 1  # one env's each time
    assert not set(during[0]) & set(during[1]) and not set(during[1]) & set(during[2])
    assert task_databases(mysql_url, pid[0]) == []


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--env.taskset.env-id", "LifelongDX-v0"], "no such environment id"),
        (["--env.taskset.split", "nope"], "is neither a file nor a shipped db task set"),
        (["--env.taskset.env-kwargs", '{"max_turns": 0}'], "max_turns must be at least 1"),
    ],
    ids=["env-id", "split", "env-kwargs"],
)
def test_bad_arguments_are_one_error(flags: list[str], message: str, tmp_path: Path):
    command = [str(VF_BIN / "vf-eval"), "lifelong-gym-verifiers", *flags, "-n", "1"]
    command += ["--no-push", "-o", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode != 0
    text = " ".join((done.stdout + done.stderr).replace("│", " ").split())
    assert message in text and "Traceback" not in text


LOAD = """
import json, sys
import verifiers.v1 as vf
from lifelong_gym.errors import LifelongGymError
from lifelong_gym.integrations.verifiers import load_environment

try:
    env = load_environment(*json.loads(sys.argv[1]), **json.loads(sys.argv[2]))
except LifelongGymError as error:
    print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
else:
    rows = [task.data.model_dump(include={"task_index", "env_kwargs"}) for task in env.taskset]
    print(json.dumps({"env": isinstance(env, vf.Env), "rows": rows}))
"""


def load_environment(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """`load_environment(*args, **kwargs)` in the verifiers venv: its rows, or its error."""
    command = [str(VF_BIN / "python"), "-c", LOAD, json.dumps(args), json.dumps(kwargs)]
    done = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_load_environment_makes_one_row_per_task_in_lifelong_order():
    env = make_env("LifelongKG-v0", {"tasks": "default"}).unwrapped
    order = list(env.tasks.order)
    env.close()
    loaded = load_environment("LifelongKG-v0", split="default", max_turns=4)
    assert loaded["env"] is True
    assert [row["task_index"] for row in loaded["rows"]] == order
    assert {json.dumps(row["env_kwargs"]) for row in loaded["rows"]} == {
        json.dumps({"max_turns": 4, "tasks": "default"})
    }


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        (["LifelongDX-v0"], {}, "EnvArgumentError: env 'LifelongDX-v0': no such environment id"),
        (["LifelongDB-v0"], {"split": "nope"}, "TaskFileError: tasks='nope' is neither a file"),
        (["LifelongDB-v0"], {"tasks": "default"}, "give the task set as split"),
        (["LifelongDB-v0"], {"action_format": "tools"}, "play the text format"),
        (["LifelongDB-v0"], {"max_turn": 3}, "max_turn"),
    ],
    ids=["env-id", "split", "tasks", "tools", "unknown-argument"],
)
def test_load_environment_bad_input_is_one_error(args, kwargs, error):
    assert error in load_environment(*args, **kwargs)["error"]
