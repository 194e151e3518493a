"""Mistakes to avoid: a new lifelong memory method in about 40 lines (docs/methods.md).

After a task the agent failed, remember a short note of what it did; before a new task,
put the notes of the failed tasks sharing a skill with it between the instructions and
the task. From the command line (the repository's folder on PYTHONPATH):

    lifelong-gym run --callback examples.mistakes_to_avoid.MistakesToAvoidCallback:k=3

or `python examples/mistakes_to_avoid.py OUTPUT` (the runner, on the shipped DB tasks).
"""

from __future__ import annotations

import sys

from lifelong_gym.methods import Method
from lifelong_gym.run import Runner  # also gives every Method its runner face
from lifelong_gym.session import Role, Session

HEADING = "Mistakes made on similar tasks before; do not repeat them:"


class MistakesToAvoid(Method):
    """Notes of failed tasks; the `k` latest sharing a skill with a task go into its prompt."""

    def __init__(self, k: int = 3, note_chars: int = 1000):
        self.k, self.note_chars = k, note_chars
        self.notes: list[dict] = []  # {"skills": [...], "text": "..."}, oldest first

    def start(self, session: Session) -> None:
        """Insert the notes of earlier failed tasks that share a skill with this one."""
        notes = [n["text"] for n in self.notes if set(n["skills"]) & set(session.skills)]
        if self.k and notes:
            lines = "\n".join(f"- {note}" for note in notes[-self.k :])
            session.insert_memory(f"{HEADING}\n{lines}", title="mistakes to avoid")

    def finish(self, session: Session) -> None:
        """Note what the agent did on a task it failed (a probe or an error teaches nothing)."""
        if session.probe or session.errored or session.solved:
            return
        replies = [m.content for m in session.chat_history if m.role == Role.AGENT] or [""]
        task = session.task_text.splitlines()[0][: self.note_chars]
        reply, status = replies[-1][: self.note_chars], session.status.value
        note = f"{task} Your last reply, {reply!r}, ended it: {status}, {session.outcome.value}."
        self.notes.append({"skills": list(session.skills), "text": note})

    def state(self) -> dict:
        return {"notes": self.notes}

    def load_state(self, state: dict) -> None:
        self.notes = state.get("notes", [])


MistakesToAvoidCallback = MistakesToAvoid.callback_class()  # for --callback


if __name__ == "__main__":
    import gymnasium as gym

    from lifelong_gym.agents import OracleAgent

    env = gym.make("LifelongDB-v0", max_turns=1)  # one turn: the oracle fails many tasks
    method = MistakesToAvoid(k=3)
    Runner(env, OracleAgent(env.unwrapped.tasks), [method.as_callback()], output=sys.argv[1]).run()
