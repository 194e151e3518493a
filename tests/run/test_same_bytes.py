"""The oracle's run on the shipped DB set (SQLite) writes the same bytes release to release.

The hashes were taken from the runner before its services (progress bar, cost meter,
probes, plots, failure stop) became default callbacks, and sessions.jsonl's again when
`insert_memory` came to record where its text sits instead of a copy of it (compared
session by session: nothing else changed); a change to the order of events or to what the
run writes shows here first.
"""

from __future__ import annotations

import hashlib

import gymnasium as gym

import lifelong_gym
from lifelong_gym.agents import OracleAgent
from lifelong_gym.run import ExperienceReplayCallback, Runner

gym.register_envs(lifelong_gym)

SHA256 = {
    "sessions.jsonl": "f6da9e1e5217db4a849b863f11edb6b1d1733bf3fde5aaaef208a05001eae46d",
    "metrics.json": "857e5521bcc095c13cce78addbccac3ae190e4aaa3a10c74909988f9434fc90c",
    "state.json": "b838a2455095f8ceecc12f244ad71bb51729850aaeb7c79926db3cc559295037",
}


def test_a_40_task_oracle_run_on_the_shipped_db_set_hashes_as_before(tmp_path):
    env = gym.make("LifelongDB-v0", backend="sqlite")
    agent = OracleAgent(env.unwrapped.tasks)
    callbacks = [ExperienceReplayCallback(n=2)]
    Runner(env, agent, callbacks, output=tmp_path, max_tasks=40, seed=0, plots=False).run()
    env.close()
    hashes = {name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() for name in SHA256}
    assert hashes == SHA256
