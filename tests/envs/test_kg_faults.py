"""The SPARQL endpoint (Virtuoso) dies mid-run and starts again: the task in flight ends
`task_environment_error`, the next tasks wait for the endpoint and score, the metrics
count the cost, and nothing is counted twice.

The embedded Oxigraph store runs in the environment's own process: it dies with the run,
which resumes from its snapshot (tests/test_cli_concurrency.py kills runs with SIGKILL).
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.session import SessionStatus

from ..fault_points import strike_run
from .private_virtuoso import PrivateVirtuoso

ERROR = SessionStatus.TASK_ENVIRONMENT_ERROR.value


@pytest.fixture
def private_endpoint(tmp_path):
    """A Virtuoso of this test's own, holding the shipped KG; killed at the end."""
    server = PrivateVirtuoso(tmp_path / "virtuoso")
    server.start()
    try:
        server.wait()
        server.load_graph()
        yield server
    finally:
        server.kill()


def test_endpoint_killed_and_started_again_mid_run(private_endpoint, tmp_path):
    env = gym.make("LifelongKG-v0", backend="sparql", url=private_endpoint.url)
    try:
        sessions, metrics = strike_run(
            env,
            tmp_path / "run",
            position=1,
            tasks=4,
            fault=private_endpoint.kill,
            repair=private_endpoint.start,  # not waited for: the next task's start waits
        )
    finally:
        env.close()
    assert [s.status.value for s in sessions] == ["completed", ERROR, "completed", "completed"]
    assert "The knowledge graph failed" in sessions[1].chat_history[-1].content
    assert [s.outcome.value for i, s in enumerate(sessions) if i != 1] == ["correct"] * 3
    assert metrics.status_counts[ERROR] == 1 and metrics.correct == 3
