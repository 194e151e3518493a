"""A lifelong method in one callback: re-ask the agent once when its reply has no valid action.

Without it, a reply in neither of the database task's formats ends the task as
`agent_validation_failed`. With it, the runner does not send such a reply to the
environment; the callback puts the reply and a correction into the session's history
and the agent answers again (the wasted reply still counts as a turn).

    python examples/reask_on_format_error.py --tasks path/to/tasks.jsonl --output runs/reask

or, from the command line, once this module is importable:

    lifelong-gym run --tasks ... --output runs/reask \\
        --callback reask_on_format_error.ReaskOnFormatError:max_reasks=1
"""

from __future__ import annotations

import argparse

import gymnasium as gym

import lifelong_gym  # noqa: F401  (registers the environment ids)
from lifelong_gym.actions import InvalidReply
from lifelong_gym.agents import make_agent
from lifelong_gym.results.report import format_report
from lifelong_gym.run import Callback, Runner, register_callback
from lifelong_gym.session import Role

REASK_NOTE = "Your reply has no valid action"


@register_callback("reask_on_format_error")
class ReaskOnFormatError(Callback):
    """Give the agent `max_reasks` more chances per task to use a valid action format."""

    state_attributes = ("reasks",)  # saved with each snapshot, restored on resume

    def __init__(self, max_reasks: int = 1):
        self.max_reasks = max_reasks
        self.reasks = 0  # over the whole run
        self.left = max_reasks

    def on_session_create(self, run, state, control, **kwargs):
        self.left = self.max_reasks

    def on_agent_inference(self, run, state, control, *, env, session, **kwargs):
        parsed = env.unwrapped.parse_action(control.reply or "")  # every env has its parser
        if not isinstance(parsed, InvalidReply) or self.left == 0:
            return None
        self.left -= 1
        self.reasks += 1
        session.add(Role.AGENT, control.reply or "")
        session.add(Role.USER, f"{REASK_NOTE} ({parsed.reason}). Reply again in the format asked.")
        control.skip_next_interaction = True  # the runner asks the agent again
        return control


def main() -> None:
    """Run the DB environment's stream with the callback."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", required=True, help="a DB task file")
    parser.add_argument("--agent", default="oracle")
    parser.add_argument("--output", default="runs/reask_on_format_error")
    parser.add_argument("--max-tasks", type=int)
    args = parser.parse_args()

    env = gym.make("LifelongDB-v0", tasks=args.tasks)
    agent = make_agent(args.agent, env.unwrapped.tasks)
    callback = ReaskOnFormatError(max_reasks=1)
    metrics = Runner(env, agent, [callback], output=args.output, max_tasks=args.max_tasks).run()
    print(format_report(metrics))
    print(f"re-asked {callback.reasks} times")
    env.close()


if __name__ == "__main__":
    main()
