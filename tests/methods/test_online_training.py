"""Online training: LoRA updates along the stream with the tiny transformers model.

The agent replies as the oracle (so tasks are solved and learned from) and carries the
tiny random model, which the method trains; every test loads its own copy of the model,
since the method puts adapters on the one it is given.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import torch

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.results.folder import SESSIONS_FILE, STATE_FILE
from lifelong_gym.run import Callback, Runner, make_callback
from lifelong_gym.run.online_training import FOLDER
from lifelong_gym.run.probes import Probes
from tests.agents.episodes import play_stream
from tests.command_line import assert_one_line_error, run_cli

from .online_run import SPEC, ModelOracle, adapters, solved_conversation, tiny_model

pytest.importorskip("peft", reason="online training needs peft: pip install 'lifelong-gym[train]'")
ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "lifelong_gym/data/db/default.jsonl"


@pytest.fixture
def env():
    env = gym.make("LifelongDB-v0")
    yield env
    env.close()


def test_an_update_changes_the_weights_and_the_next_tasks_logprobs(env, tiny_model_dir, tmp_path):
    order = env.unwrapped.tasks.order
    agent = ModelOracle(env.unwrapped.tasks, tiny_model(tiny_model_dir))
    callback = make_callback(SPEC)
    callback.setup(agent, env)
    learner = callback.learner
    upcoming = solved_conversation(env, order[2])  # the task after the update
    before, weights = learner.logprob(upcoming), adapters(learner)
    runner = Runner(env, agent, [callback], output=tmp_path, max_tasks=2, progress=False)
    runner.run()
    assert [s.outcome.value for s in runner.history] == ["correct", "correct"]
    record = runner.history[1].details["online_training"]
    assert record["update"] == 1 and record["steps"] == 2 and record["examples"] == 4
    assert record["tokens"] > 0 and record["loss"] > 0 and record["seconds"] >= 0
    assert "online_training" not in runner.history[0].details  # updates come every 2 tasks
    after = adapters(learner)
    changed = [k for k in weights if not torch.equal(weights[k], after[k])]
    assert any("lora_B" in k for k in changed) and any("lora_A" in k for k in changed)
    assert learner.logprob(upcoming) > before  # the next task's solution grew more likely
    assert agent.model.model is learner.model  # the agent generates with the adapted model


def test_the_snapshot_restores_the_weights_bit_for_bit_after_a_sigkill(tiny_model_dir, tmp_path):
    def run(output: Path, kill: int = 0) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "tests.methods.online_run", str(tiny_model_dir)]
        command += [str(output), "6"] + ([str(kill)] if kill else [])
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)

    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert run(whole).returncode == 0
    # killed after task 4's update, before task 4 or the new weights were recorded
    assert run(killed, kill=4).returncode == -9
    assert len((killed / SESSIONS_FILE).read_text().splitlines()) == 3
    state = json.loads((killed / STATE_FILE).read_text())["callbacks"]["OnlineTrainingCallback"]
    assert state["updates"] == 1 and state["adapters"]["file"] == "adapters-000001.safetensors"
    done = run(killed)
    assert done.returncode == 0, done.stderr[-2000:]

    def sessions(folder: Path) -> list[dict]:
        records = [json.loads(line) for line in (folder / SESSIONS_FILE).open()]
        for record in records:
            record.pop("timestamp", None)
            record.get("details", {}).get("online_training", {}).pop("seconds", None)
        return records

    assert sessions(killed) == sessions(whole)
    assert [s["details"]["online_training"]["update"] for s in sessions(whole)[1::2]] == [1, 2, 3]
    final = "adapters-000003.safetensors"
    assert (killed / FOLDER / final).read_bytes() == (whole / FOLDER / final).read_bytes()
    assert sorted(p.name for p in (killed / FOLDER).iterdir()) == [
        "adapters-000002.safetensors",
        final,
    ]


class ProbeReader(Callback):
    """At each probe task, the logprob the learner gives a fixed conversation."""

    def __init__(self, learner, messages):
        self.learner, self.messages, self.read = learner, messages, []

    def on_environment_reset(self, run, state, control, *, session, **kwargs):
        if session.probe:
            self.read.append((state.tasks_done, self.learner.logprob(self.messages)))


def test_a_probe_reads_the_updated_weights_and_teaches_nothing(env, tiny_model_dir, tmp_path):
    order = env.unwrapped.tasks.order
    agent = ModelOracle(env.unwrapped.tasks, tiny_model(tiny_model_dir))
    callback = make_callback(SPEC)
    callback.setup(agent, env)
    reader = ProbeReader(callback.learner, solved_conversation(env, order[10]))
    base = callback.learner.logprob(reader.messages)
    shipped = SHIPPED.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "probes.jsonl").write_text("".join(shipped[200:202]), encoding="utf-8")
    probe_env = gym.make("LifelongDB-v0", tasks=str(tmp_path / "probes.jsonl"))
    agent.use_probe_tasks(probe_env.unwrapped.tasks)
    probes = Probes(probe_env, every=2)
    runner = Runner(
        env,
        agent,
        [callback, reader],
        output=tmp_path / "run",
        max_tasks=4,
        progress=False,
        probes=probes,
    )
    runner.run()
    points = sorted({point for point, _ in reader.read})
    assert points == [0, 2, 4]
    at = {point: value for point, value in reader.read}  # one value per point: no update
    assert at[0] == base and at[2] != at[0] and at[4] != at[2]
    assert at[4] == callback.learner.logprob(reader.messages)  # what the run ended with
    method = callback.method
    assert method.tasks == 4 and method.updates == 2
    assert [item["task_index"] for item in method.buffer] == order[:4]


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("online_training", "needs a local model (hf:DIR): the OracleAgent agent"),
        ("online_training:every=0", "every=0: give a whole number of at least 1"),
        ("online_training:lr=lots", "lr must be a number"),
        ("online_training:buffer=2,batch=4", "buffer=2"),
        ("online_training:mode=sft", "mode='sft' is unknown; choose rft or grpo"),
        ("online_training:mode=grpo", "add the group_self_consistency callback to the run"),
        ("online_training:mode=grpo,buffer=0", "buffer=0: give a whole number of at least 1"),
    ],
)
def test_the_command_line_refuses_in_one_line(tmp_path, spec, fragment):
    result = run_cli("run", "--output", str(tmp_path), "--max-tasks", "1", "--callback", spec)
    assert_one_line_error(result, fragment)


def test_a_model_served_elsewhere_is_refused_at_setup(env, tmp_path):
    from lifelong_gym.agents.factory import make_agent

    agent = make_agent(
        "openai:http://127.0.0.1:9/v1#served?check_server=false", env.unwrapped.tasks
    )
    runner = Runner(env, agent, [make_callback("online_training")], output=tmp_path)
    with pytest.raises(CallbackSpecError, match=r"needs a local model \(hf:DIR\).*served"):
        runner.run()
    assert not (tmp_path / SESSIONS_FILE).exists()


def test_a_lora_target_the_model_lacks_is_refused_at_setup(env, tiny_model_dir):
    agent = ModelOracle(env.unwrapped.tasks, tiny_model(tiny_model_dir))
    with pytest.raises(CallbackSpecError, match="LoRA targets"):
        make_callback("online_training:targets=[no_such_proj]").setup(agent, env)


def test_the_wrapper_updates_the_weights_in_a_plain_loop(env, tiny_model_dir):
    from lifelong_gym.training.online import LoraLearner
    from lifelong_gym.wrappers import OnlineTraining

    model = tiny_model(tiny_model_dir)
    learner = LoraLearner(model, lr=0.01)
    wrapped = OnlineTraining(env, learner, every=2, steps=1, batch=2)
    weights = adapters(learner)
    infos = play_stream(wrapped, OracleAgent(env.unwrapped.tasks), 2)
    assert "online_training" not in infos[0]
    assert infos[1]["online_training"]["update"] == 1
    assert infos[1]["online_training"]["examples"] == 2
    assert any(not torch.equal(weights[k], v) for k, v in adapters(learner).items())
    assert model.generate([[{"role": "user", "content": "hi"}]])  # it still generates
