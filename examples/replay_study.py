"""The paper's replay study: the same task stream with N = 0, 1, 4, 16, 64 replayed experiences.

Each N is one run folder (resumable); the comparison table and one plot of the learning
curves come at the end.

    python examples/replay_study.py --agent hf:/models/Qwen2.5-7B-Instruct --max-tasks 100
    python examples/replay_study.py --agent "openai:http://127.0.0.1:8000/v1#my-model"

Add `--budget auto` to keep each prompt within the model's context window.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the environment ids
from lifelong_gym.agents import make_agent
from lifelong_gym.results.compare import format_comparison, load_compared_runs, plot_comparison
from lifelong_gym.run import ExperienceReplayCallback, Runner


@dataclass
class Study:
    env_id: str = "LifelongDB-v0"
    agent: str = "oracle"
    output: Path = Path("runs/replay-study")
    replay_sizes: list[int] = field(default_factory=lambda: [0, 1, 4, 16, 64])
    max_tasks: int | None = None
    budget: str | None = None


def run_study(study: Study) -> None:
    env = gym.make(study.env_id)
    agent = make_agent(study.agent, env.unwrapped.tasks)
    budget = int(study.budget) if study.budget and study.budget.isdigit() else study.budget
    folders = []
    for n in study.replay_sizes:
        folder = study.output / f"replay-{n}"
        replay = ExperienceReplayCallback(n=n, budget=budget)
        Runner(env, agent, [replay], output=folder, max_tasks=study.max_tasks).run()
        folders.append(folder)
    env.close()
    runs = load_compared_runs(folders)  # lettered A, B, ... in the order of the sizes
    print(format_comparison([run.letter for run in runs], [run.metrics for run in runs]))
    print("wrote", plot_comparison(runs, study.output / "comparison.png"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default=Study.env_id)
    parser.add_argument("--agent", default=Study.agent, help="oracle, hf:PATH or openai:URL#MODEL")
    parser.add_argument("--output", type=Path, default=Study.output)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 1, 4, 16, 64])
    parser.add_argument("--max-tasks", type=int)
    parser.add_argument("--budget", help="a token budget, or auto for the model's context window")
    args = parser.parse_args()
    run_study(Study(args.env, args.agent, args.output, args.sizes, args.max_tasks, args.budget))


if __name__ == "__main__":
    main()
