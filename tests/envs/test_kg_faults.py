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

from ..fault_points import strike_run
from ..private_servers import running
from .private_virtuoso import PrivateVirtuoso


@pytest.fixture
def private_endpoint(tmp_path):
    """A Virtuoso of this test's own, holding the shipped KG; killed at the end."""
    with running(PrivateVirtuoso(tmp_path / "virtuoso")) as server:
        server.load_graph()
        yield server


def test_endpoint_killed_and_started_again_mid_run(private_endpoint, tmp_path):
    with gym.make("LifelongKG-v0", backend="sparql", url=private_endpoint.url) as env:
        failed = strike_run(
            env,
            tmp_path / "run",
            position=1,
            tasks=4,
            fault=private_endpoint.kill,
            repair=private_endpoint.start,  # not waited for: the next task's start waits
        )
    assert "The knowledge graph failed" in failed.chat_history[-1].content
