"""A verl RL dataset whose rows are lifelong-gym episodes, and the agent-loop config for it.

    python examples/verl_dataset.py --output verl-lifelong --tasks 64

writes `train.parquet` (one row per task: `agent_name="lifelong_gym"`, the environment
and task in `extra_info`) and `agent_loops.yaml`. Then, on a machine with a GPU and verl:

    python -m verl.trainer.main_ppo \\
        data.train_files=verl-lifelong/train.parquet data.val_files=verl-lifelong/train.parquet \\
        actor_rollout_ref.rollout.mode=async \\
        actor_rollout_ref.rollout.agent.agent_loop_config_path=verl-lifelong/agent_loops.yaml \\
        actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct ...

Each rollout plays one episode (`LifelongAgentLoop`); its reward is the environment's.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import pyarrow as pa
import pyarrow.parquet as pq

import lifelong_gym  # noqa: F401 - registers the environment ids


@dataclass
class Config:
    output: str = "verl-lifelong"
    env_id: str = "LifelongDB-v0"
    tasks: int = 64
    action_format: str = "text"


def rows(config: Config) -> list[dict]:
    """One dataset row per task (the first `tasks` sample indices of the shipped set)."""
    from lifelong_gym.integrations.verl import dataset_row

    indices = gym.make(config.env_id).unwrapped.tasks.indices[: config.tasks]
    kwargs = {"action_format": config.action_format}
    return [dataset_row(config.env_id, i, **kwargs) for i in indices]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=Config.output, help="folder for the two files")
    parser.add_argument("--env-id", default=Config.env_id, help="the environment of every row")
    parser.add_argument("--tasks", type=int, default=Config.tasks, help="rows: the first N tasks")
    parser.add_argument("--action-format", default=Config.action_format, help="text or tools")
    config = Config(**vars(parser.parse_args()))
    folder = Path(config.output)
    folder.mkdir(parents=True, exist_ok=True)
    table = rows(config)
    pq.write_table(pa.Table.from_pylist(table), folder / "train.parquet")
    loops = "- name: lifelong_gym\n  _target_: lifelong_gym.integrations.verl.LifelongAgentLoop\n"
    (folder / "agent_loops.yaml").write_text(loops)
    print(
        f"wrote {len(table)} rows to {folder / 'train.parquet'} and {folder / 'agent_loops.yaml'}"
    )


if __name__ == "__main__":
    main()
