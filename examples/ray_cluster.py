"""A local multi-node Ray cluster playing the suite: the deployment of docs/distributed.md.

Starts a Ray head (the "controller" node, where this script, the agent and a GPU would
be) and two worker nodes on this machine, one of them offering the `docker` resource as a
Docker machine would. A `RayVectorEnv` of DB environments spreads over the nodes; with
`--os-envs N` (needs Docker and the OS image) N shell environments go to the Docker node.
The oracle plays each sub-environment's episodes; the script prints where each one ran
and the score.

Run: `python examples/ray_cluster.py` (about a minute; `--os-envs 2` adds the shell).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np
import ray
from gymnasium.vector import AutoresetMode
from ray.cluster_utils import Cluster

from lifelong_gym.agents import OracleAgent
from lifelong_gym.distributed import RayVectorEnv
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.envs.os.tasks import load_os_tasks


def start_cluster() -> tuple[Cluster, dict[str, str]]:
    """A head and two workers on this machine; the names of the nodes by Ray node id."""
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 4, "include_dashboard": False}
    )
    plain = cluster.add_node(num_cpus=4)
    docker = cluster.add_node(num_cpus=4, resources={"docker": 4})
    cluster.wait_for_nodes()
    names = {
        cluster.head_node.node_id: "head (controller)",
        plain.node_id: "worker",
        docker.node_id: "docker worker",
    }
    return cluster, names


def play(envs: RayVectorEnv, oracle: OracleAgent, episodes: int) -> list[float]:
    """Every sub-environment plays `episodes` oracle episodes (SAME_STEP autoreset)."""
    envs.reset(seed=0)
    rewards: list[float] = []
    while len(rewards) < episodes * envs.num_envs:
        replies = tuple(oracle.act(session) for session in envs.call("session"))
        _, reward, terminated, truncated, info = envs.step(replies)
        ended = terminated | truncated
        rewards += reward[ended].tolist()
        if "env_error" in info:
            print("faults:", list(info["env_error"][info["_env_error"]]))
    return rewards


def main() -> None:
    """Start the cluster, play, print placements and scores, free everything."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db-envs", type=int, default=4)
    parser.add_argument("--os-envs", type=int, default=0, help="shell envs (needs Docker)")
    parser.add_argument("--episodes", type=int, default=2, help="episodes per sub-environment")
    args = parser.parse_args()

    cluster, names = start_cluster()
    ray.init(address=cluster.address, log_to_driver=False)
    suites = [("LifelongDB-v0", args.db_envs, {}, {}, load_db_tasks)]
    if args.os_envs:
        suites.append(
            ("LifelongOS-v0", args.os_envs, {"pool_size": 1}, {"docker": 1}, load_os_tasks)
        )
    try:
        for env_id, count, kwargs, resources, load_tasks in suites:
            envs = RayVectorEnv(
                env_id, count, kwargs, resources, autoreset_mode=AutoresetMode.SAME_STEP
            )
            try:
                nodes = Counter(names[p.node_id] for p in envs.placements)
                start = time.perf_counter()
                rewards = play(envs, OracleAgent(load_tasks()), args.episodes)
                seconds = time.perf_counter() - start
            finally:
                envs.close()
            print(f"{env_id}: {count} actors on {dict(nodes)}")
            print(
                f"  {len(rewards)} episodes, mean reward {np.mean(rewards):.2f}, "
                f"{len(rewards) / seconds:.1f} tasks/s"
            )
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
