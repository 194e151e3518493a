"""Every method in a probe: it reads its memory and writes nothing to it.

Each method runs a DB stream twice, with probes and without: the stream's record and the
methods' saved memory must be the same bytes, while the probes did use the memory.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.methods.experience import HEADING as REPLAY_HEADING
from lifelong_gym.methods.procedural_memory import HEADING as PROCEDURES_HEADING
from lifelong_gym.methods.reasoning_memory import HEADING as NOTES_HEADING
from lifelong_gym.methods.workflow_memory import HEADING as WORKFLOWS_HEADING
from lifelong_gym.run import Callback, Runner, make_callback
from lifelong_gym.run.probes import Probes

from .test_reasoning_memory import ScriptedModel, SolvesEvenTasks

SHIPPED = Path(lifelong_gym.__file__).parent / "data/db/default.jsonl"


class SolvesEvenProbes(SolvesEvenTasks):
    """Also solves the probes of even task index, from the probe set's references."""

    def use_probe_tasks(self, tasks):
        self.oracle.use_probe_tasks(tasks)


class ProbeWatcher(Callback):
    """Keeps each probe session as the methods left it (it runs after them)."""

    def __init__(self):
        self.probes = []
        self.results_seen = []  # how many probe records the run state held, at each probe

    def on_environment_complete(self, run, state, control, *, session, history, **kwargs):
        assert state.probing == session.probe and state.current_task == session.task_index
        if session.probe:
            self.probes.append((len(history), session.model_copy(deep=True)))
            self.results_seen.append(len(state.probe_results))


def run(folder: Path, spec: str, probe_file: Path | None) -> ProbeWatcher:
    env = gym.make("LifelongDB-v0")
    probe_env = gym.make("LifelongDB-v0", tasks=str(probe_file)) if probe_file else None
    watcher = ProbeWatcher()
    agent = SolvesEvenProbes(env.unwrapped.tasks, ScriptedModel())
    try:
        Runner(
            env,
            agent,
            [make_callback(spec), watcher],
            output=folder,
            max_tasks=8,
            progress=False,
            plots=False,
            probes=Probes(probe_env, 4) if probe_env else None,
        ).run()
    finally:
        env.close()
        if probe_env:
            probe_env.close()
    return watcher


@pytest.mark.parametrize(
    ("spec", "used"),
    [
        ("experience_replay:n=2", lambda s: REPLAY_HEADING in s.chat_history[0].content),
        ("relevant_replay:n=2", lambda s: REPLAY_HEADING in s.chat_history[0].content),
        ("reasoning_memory:k=2", lambda s: NOTES_HEADING in s.chat_history[0].content),
        ("workflow_memory:k=2", lambda s: WORKFLOWS_HEADING in s.chat_history[0].content),
        ("procedural_memory:k=2", lambda s: PROCEDURES_HEADING in s.chat_history[0].content),
        (
            "group_self_consistency:groups=1,per_group=1",
            lambda s: s.details.get("self_consistency", [{}])[0].get("groups") == 1,
        ),
    ],
)
def test_a_probe_reads_the_memory_and_changes_nothing(tmp_path, spec, used):
    lines = SHIPPED.read_text(encoding="utf-8").splitlines(keepends=True)
    probe_file = tmp_path / "probes.jsonl"
    probe_file.write_text("".join(lines[300:304]), encoding="utf-8")
    probed = run(tmp_path / "probed", spec, probe_file)
    run(tmp_path / "plain", spec, None)
    for name in ("sessions.jsonl", "state.json"):
        assert (tmp_path / "probed" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    assert [point for point, _ in probed.probes] == [0] * 4 + [4] * 4 + [8] * 4
    assert not any(used(session) for point, session in probed.probes if point == 0)
    assert any(used(session) for point, session in probed.probes if point == 8)
    assert [s.reward for _, s in probed.probes] == [1.0, 0.0, 1.0, 0.0] * 3
    assert probed.results_seen == list(range(12))  # the records before this probe's own
