"""An agent's junk text reaches the run's record and report as text, never as a crash."""

from __future__ import annotations

import gymnasium as gym

import lifelong_gym  # noqa: F401 (registers the ids)
from lifelong_gym.agents import Agent
from lifelong_gym.results.folder import read_sessions
from lifelong_gym.results.report import report_run
from lifelong_gym.run import Runner
from lifelong_gym.session import Session, SessionStatus

LONE = "\ud800"  # a lone surrogate: valid in a Python str, not in UTF-8


class LoneSurrogates(Agent):
    """Replies whose SQL and answer hold a lone surrogate (what a fuzzed policy may write)."""

    def act(self, session: Session) -> str:
        if session.agent_turns == 0:
            return f"Action: Operation\n```sql\nSELECT '{LONE}';\n```"
        return f"Action: Answer\nFinal Answer: {LONE}x"


def test_a_lone_surrogate_in_replies_is_recorded_and_reported(tmp_path):
    env = gym.make("LifelongDB-v0")
    out = tmp_path / "run"
    try:
        Runner(env, LoneSurrogates(), output=out, max_tasks=2, progress=False).run()
    finally:
        env.close()
    sessions, _, _ = read_sessions(out / "sessions.jsonl")
    assert [s.status for s in sessions] == [SessionStatus.COMPLETED] * 2
    replies = [m.content for m in sessions[0].chat_history if m.role == "agent"]
    assert replies[-1] == "Action: Answer\nFinal Answer: \ufffdx"
    report_run(out)
    assert "\ufffd" in (out / "report.html").read_text(encoding="utf-8")


def test_a_lone_surrogate_outside_the_history_is_stored_as_text():
    session = Session(task_index=0, status=SessionStatus.COMPLETED, error=f"bad {LONE}")
    session.details["sql"] = [f"SELECT '{LONE}'", "\ud83d\ude00"]
    stored = Session.model_validate_json(session.record())
    assert stored.error == "bad \ufffd"
    assert stored.details["sql"] == ["SELECT '\ufffd'", "\U0001f600"]  # a pair is its character
