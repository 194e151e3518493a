"""Online training's grpo mode: GRPO over the reply groups group self-consistency samples.

The agent replies as the oracle (so a task is solved, and then remembered as an
experience) and carries the tiny random model, whose own replies in the votes are never
valid actions: in a solved task each turn's group is mixed (the agent's reply, sent, gets
the episode's reward 1; the model's get 0), in a failed one every reward is 0.
"""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
import torch

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.db.actions import answer_reply
from lifelong_gym.methods.online_training import OnlineTrainingMethod, candidate, kept_groups
from lifelong_gym.results.folder import STATE_FILE
from lifelong_gym.run import Runner, make_callback
from lifelong_gym.run.online_training import FOLDER
from lifelong_gym.session import EvaluationOutcome, ReplyGroup, Role, Session, SessionStatus
from tests.agents.episodes import play_stream
from tests.command_line import run_cli

from .online_run import ModelOracle, adapters, solved_conversation, tiny_model

pytest.importorskip("peft", reason="online training needs peft: pip install 'lifelong-gym[train]'")
VOTE = "group_self_consistency:groups=1,per_group=1"
GRPO = "online_training:mode=grpo,every=2,steps=2,batch=4,lr=0.01,max_tokens=4096"


class SolvesTheFirstTask(ModelOracle):
    """The oracle's replies on the stream's first task, a wrong answer on every other."""

    def act(self, session):
        first = session.task_index == self.tasks.order[0]
        return super().act(session) if first else answer_reply("I do not know")


@pytest.fixture
def env():
    env = gym.make("LifelongDB-v0")
    yield env
    env.close()


def run(env, agent, tmp_path, tasks: int = 2):
    """`tasks` stream tasks with the vote and grpo; the runner and the grpo callback."""
    vote, grpo = make_callback(VOTE), make_callback(GRPO)
    runner = Runner(env, agent, [vote, grpo], output=tmp_path, max_tasks=tasks, progress=False)
    grpo.setup(agent, env)  # the adapters go on before the weights are read
    return runner, grpo


def test_a_grpo_update_over_mixed_groups_pushes_the_sent_reply_up(env, tiny_model_dir, tmp_path):
    agent = ModelOracle(env.unwrapped.tasks, tiny_model(tiny_model_dir))
    runner, callback = run(env, agent, tmp_path)
    learner, weights = callback.learner, adapters(callback.learner)
    runner.run()
    first, second = runner.history
    assert [s.outcome.value for s in runner.history] == ["correct", "correct"]
    assert first.reply_groups == []  # no experience to vote with yet
    groups = second.reply_groups
    assert groups and all(g.chosen[0] and not any(g.chosen[1:]) for g in groups)
    record = second.details["online_training"]
    assert record["mode"] == "grpo" and record["update"] == 1
    assert record["groups"] == len(groups) and record["equal_groups"] == 0
    assert record["steps"] == 2 and record["examples"] == 2 * len(groups)
    assert record["tokens"] > 0 and record["seconds"] >= 0
    after = adapters(learner)
    assert any(not torch.equal(weights[k], after[k]) for k in weights if "lora_B" in k)
    # the reply sent (reward 1) grew more likely in its prompt, the other (reward 0) less
    item = kept_groups(second, [(g, [1.0, 0.0]) for g in groups])
    for group in item["groups"]:
        sent, other = (candidate(item, group, i) for i in (0, 1))
        with learner.model.disable_adapter():  # the weights before the update (B was 0)
            before = [learner.logprob(c, last_reply=True) for c in (sent, other)]
        after = [learner.logprob(c, last_reply=True) for c in (sent, other)]
        assert after[0] > before[0] and after[1] < before[1]
    upcoming = solved_conversation(env, env.unwrapped.tasks.order[2])
    with learner.model.disable_adapter():
        unchanged = learner.logprob(upcoming)
    assert learner.logprob(upcoming) != unchanged  # the next task reads the new weights
    assert callback.method.buffer == []  # the groups are used once
    saved = json.loads((tmp_path / STATE_FILE).read_text())["callbacks"]["OnlineTrainingCallback"]
    assert saved["adapters"]["file"] == "adapters-000001.safetensors"


def test_groups_with_equal_rewards_change_nothing(env, tiny_model_dir, tmp_path):
    agent = SolvesTheFirstTask(env.unwrapped.tasks, tiny_model(tiny_model_dir))
    runner, callback = run(env, agent, tmp_path)
    weights = adapters(callback.learner)
    runner.run()
    failed = runner.history[1]
    assert failed.outcome == EvaluationOutcome.INCORRECT and failed.reply_groups
    equal = len(failed.reply_groups)
    record = failed.details["online_training"]
    assert record == {"mode": "grpo", "groups": 0, "steps": 0, "equal_groups": equal}
    after = adapters(callback.learner)
    assert all(torch.equal(weights[k], after[k]) for k in weights)  # bit for bit
    assert callback.learner.optimizer.state_dict()["state"] == {}  # no step was taken
    assert callback.method.updates == 0 and callback.method.totals["equal_groups"] == equal
    assert not (tmp_path / FOLDER).exists()  # no adapters to save


OPERATION = "Action: Operation\n```sql\nSELECT COUNT(*) FROM users;\n```"


def solved_session(*groups: ReplyGroup) -> Session:
    """A solved two-turn DB session (an operation, then the answer) with `groups`."""
    session = Session(task_index=7, status=SessionStatus.COMPLETED, reward=1.0)
    session.outcome = EvaluationOutcome.CORRECT
    for role, content in [
        (Role.USER, "Count the users."),
        (Role.AGENT, OPERATION),
        (Role.USER, "[(3,)]"),
        (Role.AGENT, "Action: Answer\nFinal Answer: [(3,)]"),
        (Role.USER, "The task is finished."),
    ]:
        session.add(role, content)
    session.reply_groups = list(groups)
    return session


def test_a_solved_group_that_agrees_is_left_out():
    # no learner is bound: an update that tried to learn would raise
    method = OnlineTrainingMethod("grpo", every=1)
    openings, replies = ["Count the users.", "Solved before: ...\nCount the users."], ["A", "A "]
    agreed = ReplyGroup(turn=1, openings=openings, replies=replies, chosen=[True, True])
    session = solved_session(agreed)
    method.finish(session)
    assert session.details["online_training"]["equal_groups"] == 1
    assert method.buffer == [] and method.updates == 0


def test_a_mixed_group_is_kept_with_each_opening_once_and_rebuilt_as_sampled():
    method = OnlineTrainingMethod("grpo", every=2)  # no update due after one task
    own, primed = "Count the users.", "Solved before: ...\nCount the users."
    first = ReplyGroup(turn=1, openings=[own, primed], replies=["A", "A "], chosen=[True, True])
    second = ReplyGroup(turn=3, openings=[own, primed], replies=["B", "C"], chosen=[True, False])
    method.finish(solved_session(first, second))
    (item,) = json.loads(json.dumps(method.state()))["buffer"]  # as state.json keeps it
    assert item["openings"] == [own, primed] and len(item["history"]) == 2
    (group,) = item["groups"]
    assert group["rewards"] == [1.0, 0.0] and method.equal_groups == 1
    history = [{"role": "assistant", "content": OPERATION}, {"role": "user", "content": "[(3,)]"}]
    assert candidate(item, group, 0, "Be exact.") == [
        {"role": "system", "content": "Be exact."},  # the agent's own, as the agent asked
        {"role": "user", "content": own},
        *history,
        {"role": "assistant", "content": "B"},
    ]
    assert candidate(item, group, 1, "Be exact.") == [
        {"role": "user", "content": primed},
        *history,
        {"role": "assistant", "content": "C"},
    ]


def test_the_wrapper_runs_grpo_over_the_groups_it_wraps(env, tiny_model_dir):
    from lifelong_gym.training.online import LoraLearner
    from lifelong_gym.wrappers import GroupSelfConsistency, OnlineTraining

    model = tiny_model(tiny_model_dir)
    learner = LoraLearner(model, lr=0.01, max_tokens=4096)
    with pytest.raises(ValueError, match=r"wrap a GroupSelfConsistency"):
        OnlineTraining(env, learner, mode="grpo")
    voting = GroupSelfConsistency(env, model, groups=1, per_group=1)
    wrapped = OnlineTraining(voting, learner, every=2, steps=1, mode="grpo")
    weights = adapters(learner)
    infos = play_stream(wrapped, OracleAgent(env.unwrapped.tasks), 2)
    assert "online_training" not in infos[0]
    record = infos[1]["online_training"]
    assert record["update"] == 1 and record["groups"] >= 1 and record["steps"] == 1
    assert any(not torch.equal(weights[k], v) for k, v in adapters(learner).items())


def test_the_command_line_runs_grpo_with_a_local_model(tiny_model_dir, tmp_path):
    result = run_cli(
        "run",
        "--agent",
        f"hf:{tiny_model_dir}?max_new_tokens=4",
        "--output",
        str(tmp_path),
        "--max-tasks",
        "2",
        "--callback",
        VOTE,
        "--callback",
        "online_training:mode=grpo,every=1",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    state = json.loads((tmp_path / STATE_FILE).read_text())["callbacks"]
    assert state["OnlineTrainingCallback"]["tasks"] == 2
    assert "equal_groups" in state["OnlineTrainingCallback"]["totals"]
