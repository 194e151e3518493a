"""Callbacks: state, the registry and specs, and the re-ask example on the DB environment."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gymnasium as gym
import pytest

from lifelong_gym.agents import Agent, OracleAgent
from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.run import Runner
from lifelong_gym.run.callbacks import EVENTS, Callback, RunState, SessionControl, state_keys
from lifelong_gym.run.registry import (
    CALLBACKS,
    make_callback,
    parse_callback_spec,
    register_callback,
)
from lifelong_gym.session import Session, SessionStatus

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "reask_on_format_error.py"


@register_callback("test_memory")
class Memory(Callback):
    """Remembers the last `size` task indices it saw finish."""

    state_attributes = ("recent",)

    def __init__(self, size: int = 2, label: str = ""):
        self.size, self.label = size, label
        self.recent: list[int] = []

    def on_environment_complete(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        self.recent = [*self.recent, session.task_index][-self.size :]


def test_handlers_do_nothing_by_default():
    callback, control = Callback(), SessionControl()
    session = Session(task_index=0)
    for event in EVENTS:
        assert getattr(callback, event)(None, RunState(), control, session=session) is None
    assert control == SessionControl()
    assert callback.state() == {}


def test_state_round_trip_and_keys():
    memory = Memory(size=3)
    memory.recent = [4, 5]
    rebuilt = Memory.from_state(memory.state(), size=3)
    assert rebuilt.recent == [4, 5] and rebuilt.size == 3
    assert state_keys([Memory(), Callback(), Memory()]) == ["Memory", "Callback", "Memory#2"]


def test_specs_build_registered_and_importable_callbacks():
    assert parse_callback_spec("x:a=1, b=text,c=[1, 2]") == (
        "x",
        {"a": 1, "b": "text", "c": [1, 2]},
    )
    built = make_callback("test_memory:size=5,label=hello")
    assert isinstance(built, Memory) and built.size == 5 and built.label == "hello"
    assert isinstance(make_callback(f"{__name__}.Memory"), Memory)
    with pytest.raises(
        CallbackSpecError, match="no callback named 'nope'; registered: .*test_memory"
    ):
        make_callback("nope")
    with pytest.raises(CallbackSpecError, match="'size' is not key=value"):
        make_callback("test_memory:size")
    with pytest.raises(CallbackSpecError, match="not valid YAML"):
        make_callback("test_memory:size=[1")
    with pytest.raises(CallbackSpecError, match="takes no argument 'colour'; its arguments: size"):
        make_callback("test_memory:colour=red")
    with pytest.raises(CallbackSpecError, match="is not a Callback subclass"):
        make_callback("pathlib.Path")
    with pytest.raises(ValueError, match="registered already"):
        register_callback("test_memory")(type("Other", (Callback,), {}))
    assert CALLBACKS["test_memory"] is Memory


def load_example():
    spec = importlib.util.spec_from_file_location("reask_on_format_error", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Sloppy(Agent):
    """Forgets the action format on its first reply of each task, then acts like the oracle."""

    def __init__(self, oracle: OracleAgent, note: str):
        self.oracle, self.note = oracle, note

    def act(self, session: Session) -> str:
        history = session.chat_history
        if len(history) == 1:
            return "SELECT 1"
        if len(history) > 2 and history[2].content.startswith(self.note):
            # the oracle counts turns: show it the history without the re-asked reply
            session = session.model_copy(update={"chat_history": history[:1] + history[3:]})
        return self.oracle.act(session)


def test_the_reask_example_rescues_format_errors(external_dir, tmp_path):
    example = load_example()
    tasks = str(external_dir / "agentbench/data/dbbench/dev.jsonl")
    results = {}
    for name, callbacks in [("plain", []), ("reask", [example.ReaskOnFormatError()])]:
        env = gym.make("LifelongDB-v0", tasks=tasks, max_turns=4)
        agent = Sloppy(OracleAgent(env.unwrapped.tasks), example.REASK_NOTE)
        runner = Runner(env, agent, callbacks, output=tmp_path / name, max_tasks=8, progress=False)
        results[name] = (runner.run(), runner.history)
        env.close()
    plain, plain_history = results["plain"]
    reask, reask_history = results["reask"]
    assert plain.correct == 0
    assert {s.status for s in plain_history} == {SessionStatus.AGENT_VALIDATION_FAILED}
    assert reask.correct == 8
    assert all(example.REASK_NOTE in s.chat_history[2].content for s in reask_history)
    assert reask_history[0].chat_history[1].content == "SELECT 1"
