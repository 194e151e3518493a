"""A lifelong run whose environments live in Ray actors (`--ray`), on a local cluster."""

from __future__ import annotations

import json
import time

import pytest

ray = pytest.importorskip("ray", reason="needs Ray: pip install 'lifelong-gym[ray]'")

from ray.cluster_utils import Cluster  # noqa: E402

from lifelong_gym.run import Callback, RunConfig, build_runner  # noqa: E402
from lifelong_gym.session import Role  # noqa: E402

CALLBACKS = ["tests.crash_support.Pacer", f"{__name__}.Reask"]


class Reask(Callback):
    """Asks the agent again, once, in every other task: the note must reach the actor's
    session (and so the recorded one) as it does a local environment's."""

    def on_agent_inference(self, run, state, control, *, agent, env, session, history, **kwargs):
        if session.task_index % 2 or session.details.get("reasked"):
            return None
        session.details["reasked"] = True
        session.add(Role.AGENT, control.reply or "")
        session.add(Role.USER, "Please send that again.")
        control.skip_next_interaction = True
        return control


@pytest.fixture(scope="module")
def cluster():
    """A head and a worker node, on this machine."""
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False}
    )
    cluster.add_node(num_cpus=4)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def run(output, **settings) -> bytes:
    config = RunConfig(
        output=output, max_tasks=12, callbacks=CALLBACKS, progress=False, concurrency=4, **settings
    )
    runner = build_runner(config)
    try:
        runner.run()
    finally:
        runner.env.close()
    return (output / "sessions.jsonl").read_bytes()


def all_cpus_free(timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ray.available_resources().get("CPU") == ray.cluster_resources()["CPU"]:
            return True
        time.sleep(0.2)
    return False


def test_four_in_flight_through_ray_is_the_same_run_twice_and_the_same_as_here(tmp_path, cluster):
    first = run(tmp_path / "ray-1", ray=cluster.address)
    assert all_cpus_free()  # every environment's actor has ended
    assert run(tmp_path / "ray-2", ray=cluster.address) == first
    assert run(tmp_path / "local") == first  # where the environments run changes nothing
    sessions = [json.loads(line) for line in first.splitlines()]
    reasked = [s for s in sessions if s["task_index"] % 2 == 0]
    assert reasked and all(s["details"]["reasked"] for s in reasked)
    for session in sessions:  # the note reached the actor's session, once, where it was given
        notes = [m for m in session["chat_history"] if m["content"] == "Please send that again."]
        assert len(notes) == (session["task_index"] % 2 == 0)
    assert (tmp_path / "ray-1" / "config.json").read_text() == (
        tmp_path / "local" / "config.json"
    ).read_text()  # so a run started here can be resumed on the cluster, and back
