"""Group self-consistency: the vote, its tie-break, and how it degrades, on the DB environment."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import AgentError, LanguageModel, OracleAgent
from lifelong_gym.envs.db.actions import answer_reply
from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.methods.experience import HEADING
from lifelong_gym.methods.self_consistency import TIE_QUESTION
from lifelong_gym.run import GroupSelfConsistencyCallback, Runner
from lifelong_gym.wrappers import GroupSelfConsistency
from tests.agents.episodes import play_stream

from .skill_recall import labelled_task_file

ORDER = ["alpha", "beta"] * 4
WRONG = answer_reply("I do not know")


class RuleModel(LanguageModel):
    """A language model whose replies follow a rule of the prompt (a real model double)."""

    def __init__(self, vote: Callable[[str], str], tie: Callable[[str], str] = lambda _: "1"):
        self.vote, self.tie, self.calls = vote, tie, 0

    def generate(self, batch: Sequence[Sequence[dict[str, str]]]) -> list[str]:
        self.calls += len(batch)
        replies = []
        for messages in batch:
            last = messages[-1]["content"]
            rule = self.tie if last.startswith(TIE_QUESTION) else self.vote
            replies.append(rule(messages[0]["content"] if rule is self.vote else last))
        return replies


class FailingModel(LanguageModel):
    def generate(self, batch):
        raise AgentError("the server went away")


class FirstSolvedThenWrong(OracleAgent):
    """Solves the first two tasks (one per label), then always answers wrongly."""

    def act(self, session):
        return super().act(session) if session.task_index < 2 else WRONG


@pytest.fixture
def env(tmp_path):
    env = gym.make("LifelongDB-v0", tasks=str(labelled_task_file(tmp_path, ORDER)))
    yield env
    env.close()


def _oracle_vote(env):
    """Votes the oracle's reply when its prompt holds experiences, else a wrong answer."""
    oracle = OracleAgent(env.unwrapped.tasks)

    def vote(prompt: str) -> str:
        session = env.unwrapped.session
        return oracle.act(session) if HEADING in prompt else WRONG

    return vote


def test_majority_of_groups_overrules_the_agent(env):
    model = RuleModel(_oracle_vote(env))
    wrapped = GroupSelfConsistency(env, model, groups=2, per_group=1)
    infos = play_stream(wrapped, FirstSolvedThenWrong(env.unwrapped.tasks))
    assert all(info["outcome"] == "correct" for info in infos)
    votes = [r for info in infos for r in info["self_consistency"] if "candidates" in r]
    assert len(votes) > len(infos) and all(r["chosen_by"] == "majority" for r in votes)
    assert infos[0]["self_consistency"][0]["reason"] == "no experiences yet"
    assert model.calls == sum(r["groups"] for r in votes)  # one inference per group and turn
    assert max(r["groups"] for r in votes) == 2


@pytest.mark.parametrize(
    "tie, chosen_by, outcome",
    [
        (lambda _: "Candidate 2", "tie_break", "correct"),
        (lambda _: "no idea", "agent", "incorrect"),
    ],
)
def test_a_tie_is_put_to_the_model_and_its_answer_read(env, tie, chosen_by, outcome):
    model = RuleModel(_oracle_vote(env), tie=tie)
    wrapped = GroupSelfConsistency(env, model, groups=1, per_group=1)
    infos = play_stream(wrapped, FirstSolvedThenWrong(env.unwrapped.tasks))
    later = infos[2:]
    assert all(info["outcome"] == outcome for info in later)
    first_votes = [info["self_consistency"][0] for info in later]
    assert all(r["chosen_by"] == chosen_by for r in first_votes)
    if chosen_by == "agent":
        assert all("tie-break answer unreadable" in r["reason"] for r in first_votes)


def test_a_failing_model_leaves_the_agents_reply(env):
    wrapped = GroupSelfConsistency(env, FailingModel(), groups=2, per_group=2)
    infos = play_stream(wrapped, FirstSolvedThenWrong(env.unwrapped.tasks))
    assert [i["outcome"] for i in infos] == ["correct"] * 2 + ["incorrect"] * (len(ORDER) - 2)
    assert "vote failed: the server went away" in infos[-1]["self_consistency"][0]["reason"]


def test_no_valid_candidate_keeps_the_agents_reply(env):
    class GibberishLater(OracleAgent):
        def act(self, session):
            return super().act(session) if session.task_index < 2 else "gibberish"

    wrapped = GroupSelfConsistency(env, RuleModel(lambda _: "blah"), groups=2, per_group=1)
    infos = play_stream(wrapped, GibberishLater(env.unwrapped.tasks))
    assert [i["status"] for i in infos[2:]] == ["agent_validation_failed"] * (len(ORDER) - 2)
    assert infos[-1]["self_consistency"][0]["reason"] == "no candidate was valid"


def test_the_callback_through_the_runner_matches_the_wrapper(env, tmp_path):
    model = RuleModel(_oracle_vote(env))

    class ModelAgent(FirstSolvedThenWrong):
        pass

    agent = ModelAgent(env.unwrapped.tasks)
    agent.model = model  # the callback votes with the agent's own model
    callback = GroupSelfConsistencyCallback(groups=2, per_group=1)
    Runner(env, agent, [callback], output=tmp_path / "run", progress=False, plots=False).run()
    sessions = [json.loads(line) for line in (tmp_path / "run" / "sessions.jsonl").open()]
    assert all(s["outcome"] == "correct" for s in sessions)
    assert sessions[-1]["details"]["self_consistency"][0]["chosen_by"] == "majority"


def test_a_budget_trims_groups_and_may_leave_no_vote(env):
    model = RuleModel(_oracle_vote(env))
    wrapped = GroupSelfConsistency(env, model, groups=2, per_group=1)
    wrapped.method.memory.budget = 10  # far below any prompt
    wrapped.method.memory.count_tokens = lambda text: len(text.split())
    infos = play_stream(wrapped, FirstSolvedThenWrong(env.unwrapped.tasks))
    assert infos[-1]["self_consistency"][0]["reason"] == "no experience fits the budget"
    assert model.calls == 0


def test_an_agent_without_a_model_is_refused_before_the_first_task(env, tmp_path):
    callback = GroupSelfConsistencyCallback()
    agent = FirstSolvedThenWrong(env.unwrapped.tasks)
    runner = Runner(env, agent, [callback], output=tmp_path, progress=False, plots=False)
    with pytest.raises(CallbackSpecError, match="votes with the agent's model.*has none"):
        runner.run()
    assert not (tmp_path / "sessions.jsonl").exists()
