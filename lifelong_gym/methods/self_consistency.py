"""Group self-consistency: extra inferences over groups of experiences, then a vote.

The remembered experiences are split into `groups` groups of `per_group`; for each group
the model answers the current turn once more with that group in its prompt (one batched
call). The replies, with the agent's own, are normalised by the environment's
`normalize_action` and the most frequent action wins. A tie is put to the model, whose
answer is read; if it cannot be read, or the model fails, the agent's own reply stands.
Every turn's vote is recorded in `session.details["self_consistency"]`, and its candidates
(each reply and the opening it was generated from) in `session.reply_groups`, which is not
persisted: a learner reads them when the task ends (online training's grpo mode).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from lifelong_gym.session import ChatMessage, ReplyGroup, Role, Session, to_messages

from .budget import agent_model
from .experience import DEFAULT_REPLY_RESERVE, Experience, ExperienceMemory, ExperienceMethod

Normalizer = Callable[[str], str | None]
TIE_QUESTION = (
    "Several replies were proposed for your next turn. Answer with the number of the best "
    "candidate, and nothing else."
)


class GroupSelfConsistencyMethod(ExperienceMethod):
    """The paper's group self-consistency, written once for the runner and the wrapper.

    `start(session)` when a task begins keeps its opening prompt; `vote(...)` replaces one
    reply by the group vote and records how it was chosen in
    `session.details["self_consistency"]`; `finish(session)` remembers a solved session.
    With a `budget` (counted by `count_tokens`, else by the agent's model's tokenizer),
    a group's experiences are dropped until its prompt plus `reserve` tokens fits.
    """

    def __init__(
        self,
        groups: int = 2,
        per_group: int = 2,
        *,
        budget: int | str | None = None,
        count_tokens: Callable[[str], int] | None = None,
        reserve: int = DEFAULT_REPLY_RESERVE,
    ):
        if groups < 1 or per_group < 1:
            raise ValueError("groups and per_group must be at least 1")
        super().__init__(budget)
        self.groups = groups
        self.per_group = per_group
        self.reserve = reserve
        counted = budget if count_tokens is not None else None
        self.memory = ExperienceMemory(
            groups * per_group, "recent", budget=counted, count_tokens=count_tokens
        )

    def setup(self, agent: Any, env: Any) -> None:
        """Refuse an agent without a model to vote with; count the budget with it."""
        agent_model("group_self_consistency votes", agent)
        super().setup(agent, env)

    def vote(self, model: Any, normalize: Normalizer, session: Session, reply: str) -> str:
        """The reply to send instead of `reply`; the vote is recorded in the session."""
        opening = self.opening(session)  # a probe votes with its own opening, not the stream's
        if opening is None:
            return reply
        chosen, record = self.choose(model, normalize, session, *opening, reply)
        session.details.setdefault("self_consistency", []).append(record)
        return chosen

    def choose(
        self,
        model: Any,
        normalize: Normalizer,
        session: Session,
        opening: str,
        task_start: int,
        reply: str,
    ) -> tuple[str, dict[str, Any]]:
        """The reply to send for this turn, and the record of how it was chosen (`opening`
        being the env's, its task beginning at `task_start`); the candidates, when there
        were any, are kept in `session.reply_groups`."""
        chosen = self.memory.select(session.skills, opening[task_start:])
        if not chosen:
            return reply, {"chosen_by": "agent", "reason": "no experiences yet"}
        groups = [
            fitted
            for i in range(0, len(chosen), self.per_group)
            if (fitted := self._fit(opening, task_start, chosen[i : i + self.per_group]))
        ]
        if not groups:
            return reply, {"chosen_by": "agent", "reason": "no experience fits the budget"}
        later = session.chat_history[1:]
        openings = [self.memory.compose(opening, task_start, group) for group in groups]
        prompts = [to_messages([_user(text), *later]) for text in openings]
        try:
            candidates = [reply, *model.generate(prompts)]
        except Exception as error:  # noqa: BLE001 - a failing vote must not end the task
            return reply, {"chosen_by": "agent", "reason": f"vote failed: {error}"}
        keys = [normalize(c) for c in candidates]
        chosen, record = self._decide(model, session, candidates, keys)
        sent = keys[candidates.index(chosen)]
        group = ReplyGroup(
            turn=len(session.chat_history),
            openings=[session.chat_history[0].content, *openings],
            replies=candidates,
            chosen=[key is not None and key == sent for key in keys],
        )
        session.reply_groups.append(group)
        return chosen, record

    def _decide(
        self, model: Any, session: Session, candidates: list[str], keys: list[str | None]
    ) -> tuple[str, dict[str, Any]]:
        """The candidate to send (the agent's own is the first), and how it was chosen."""
        reply = candidates[0]
        votes = Counter(k for k in keys if k is not None)
        record: dict[str, Any] = {
            "groups": len(candidates) - 1,
            "candidates": len(candidates),
            "votes": sorted(votes.values()),
        }
        if not votes:
            return reply, {**record, "chosen_by": "agent", "reason": "no candidate was valid"}
        best = max(votes.values())
        tied = [k for k in dict.fromkeys(k for k in keys if k is not None) if votes[k] == best]
        if len(tied) == 1:
            return candidates[keys.index(tied[0])], {**record, "chosen_by": "majority"}
        options = [candidates[keys.index(k)] for k in tied]
        pick, reason = self._break_tie(model, session, options)
        if pick is None:
            fallback = reply if keys[0] in tied else options[0]
            return fallback, {**record, "chosen_by": "agent", "reason": reason}
        return options[pick], {**record, "chosen_by": "tie_break"}

    def _fit(self, opening: str, task_start: int, group: Sequence[Experience]) -> list[Experience]:
        """The group, less its last experiences while its prompt exceeds the token budget."""
        group = list(group)
        while group and not self.memory.fits(
            self.memory.compose(opening, task_start, group), self.reserve
        ):
            group.pop()
        return group

    def _break_tie(
        self, model: Any, session: Session, options: Sequence[str]
    ) -> tuple[int | None, str]:
        listed = "\n\n".join(f"Candidate {i}:\n{text}" for i, text in enumerate(options, start=1))
        question = _user(f"{TIE_QUESTION}\n\n{listed}")
        try:
            (answer,) = model.generate([to_messages([*session.chat_history, question])])
        except Exception as error:  # noqa: BLE001
            return None, f"tie-break failed: {error}"
        found = re.search(r"\d+", answer)
        if found and 1 <= int(found.group()) <= len(options):
            return int(found.group()) - 1, ""
        return None, f"tie-break answer unreadable: {answer[:80]!r}"


def _user(content: str) -> ChatMessage:
    return ChatMessage(role=Role.USER, content=content)
