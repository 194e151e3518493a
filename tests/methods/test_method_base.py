"""`Method`: a user's method gets both faces, the runner's callback and a Gymnasium wrapper,
with no adapter code, and the library's callback adapter takes any method."""

from __future__ import annotations

import json

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.methods import Method
from lifelong_gym.run import Runner
from lifelong_gym.run.method_callbacks import MethodCallback
from lifelong_gym.session import Session

NOTE = "Check the column names first."


class Tally(Method):
    """Inserts a note into every prompt and counts the tasks it saw finish."""

    def __init__(self, note: str = NOTE):
        self.note, self.finished = note, 0

    def start(self, session):
        session.insert_memory(self.note, title="tally")

    def finish(self, session):
        self.finished += 1

    def state(self):
        return {"finished": self.finished}

    def load_state(self, state):
        self.finished = state["finished"]


class TallyCallback(MethodCallback):
    """A hand-written adapter, as a user would subclass the library's."""

    def __init__(self):
        super().__init__()
        self.method = Tally()


def run(tmp_path, callback, max_tasks: int) -> list[dict]:
    env = gym.make("LifelongDB-v0")
    agent = OracleAgent(env.unwrapped.tasks)
    Runner(env, agent, [callback], output=tmp_path, max_tasks=max_tasks, progress=False).run()
    env.close()
    lines = (tmp_path / "sessions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_hand_written_adapter_over_a_custom_method_runs(tmp_path):
    sessions = run(tmp_path, TallyCallback(), 2)
    assert [s["outcome"] for s in sessions] == ["correct", "correct"]
    assert all(Session.model_validate(s).inserted_memory()[0]["text"] == NOTE for s in sessions)


def test_as_callback_saves_the_state_under_the_method_name_and_resumes(tmp_path):
    first = Tally()
    run(tmp_path, first.as_callback(), 2)
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["callbacks"]["TallyCallback"] == {"finished": 2}
    resumed = Tally()
    sessions = run(tmp_path, resumed.as_callback(), 3)
    assert resumed.finished == 3 and len(sessions) == 3


def test_callback_class_builds_the_method_from_keyword_arguments():
    callback = Tally.callback_class()(note="other")
    assert isinstance(callback, MethodCallback) and callback.method.note == "other"
    assert type(callback).__name__ == "TallyCallback"
    assert Tally.callback_class() is Tally.callback_class()


def test_each_shipped_method_names_its_parameters_alike_in_both_faces():
    # issue 47: the callback took budget/reserve where the wrapper took token_budget/reply_reserve
    import inspect

    from lifelong_gym.run import (
        ExperienceReplayCallback,
        GroupSelfConsistencyCallback,
        ReasoningMemoryCallback,
    )
    from lifelong_gym.wrappers import ExperienceReplay, GroupSelfConsistency, ReasoningMemory

    faces = [
        (ExperienceReplay, ExperienceReplayCallback),
        (GroupSelfConsistency, GroupSelfConsistencyCallback),
        (ReasoningMemory, ReasoningMemoryCallback),
    ]
    for wrapper, callback in faces:
        wrapped = set(inspect.signature(wrapper).parameters) - {"env", "model"}
        assert wrapped <= set(inspect.signature(callback).parameters), wrapper
    assert {"budget", "reserve"} <= set(inspect.signature(ExperienceReplay).parameters)
