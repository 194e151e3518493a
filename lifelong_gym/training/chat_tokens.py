"""The chat template's text around each turn, found by rendering probe conversations.

A multi-turn episode is built turn by turn: the first prompt is the template applied to
the opening observation; after each reply the environment's observation is appended as the
template's text for a user turn plus the generation prompt. That text is the difference
between two renderings of a probe conversation (one with the extra user turn, one without),
so it holds whatever the template writes there: the end of the assistant's turn, the user
turn's markers, a system prompt the template inserts (it sits before the first user turn,
inside `prompt_ids`, and is not repeated).

Only templates that keep earlier turns as a prefix when a turn is added can be extended
this way; `ChatTurns.from_tokenizer` checks it and raises `ChatTemplateError` otherwise
(for example a template that moves the system prompt into the last user turn).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lifelong_gym.errors import ChatTemplateError

# Probe contents: plain words, so templates that trim or escape content render them as is.
_USER, _REPLY, _NEXT_USER = "PROBEUSERONE", "PROBEREPLY", "PROBEUSERTWO"


@dataclass(frozen=True)
class ChatTurns:
    """What the template writes after a reply and around a later user turn."""

    assistant_close: str
    """The text after an assistant reply's content (SmolLM2: `<|im_end|>` and a newline)."""
    user_open: str
    """The text before a later user turn's content."""
    user_close: str
    """The text after a later user turn's content, through the generation prompt."""
    adds_system_prompt: bool
    """Whether the template writes text of its own (a default system prompt) before the
    first user turn when no system prompt is given (SmolLM2's does)."""

    @classmethod
    def from_tokenizer(cls, tokenizer: Any, system_prompt: str | None = None) -> ChatTurns:
        """Render probe conversations with `tokenizer`'s template and cut out each piece."""
        head = [{"role": "system", "content": system_prompt}] if system_prompt else []
        first = head + [{"role": "user", "content": _USER}]
        replied = first + [{"role": "assistant", "content": _REPLY}]
        prompt = render(tokenizer, first, generation_prompt=True)
        with_reply = render(tokenizer, replied, generation_prompt=False)
        extended = render(
            tokenizer, replied + [{"role": "user", "content": _NEXT_USER}], generation_prompt=True
        )
        if not with_reply.startswith(prompt + _REPLY):
            raise ChatTemplateError(
                "the chat template does not write an assistant reply right after its "
                "generation prompt; pass chat_template= a template that does"
            )
        if not extended.startswith(with_reply) or extended.count(_NEXT_USER) != 1:
            raise ChatTemplateError(
                "the chat template rewrites earlier turns when a user turn is added, so an "
                "episode cannot be extended turn by turn; pass chat_template= one that keeps "
                "earlier turns as a prefix"
            )
        user_open, user_close = extended[len(with_reply) :].split(_NEXT_USER)
        before_user = prompt[: prompt.index(_USER)]
        return cls(
            assistant_close=with_reply[len(prompt) + len(_REPLY) :],
            user_open=user_open,
            user_close=user_close,
            adds_system_prompt=not system_prompt and before_user != user_open,
        )

    def after_reply(self, stop_text: str | None) -> str:
        """The template's text still due after a reply that ended with `stop_text`.

        When the model stopped on the token that begins the template's turn end (SmolLM2's
        `<|im_end|>`), only the rest follows; otherwise (stopped by length, or on an EOS
        token the template does not write) the whole turn end follows.
        """
        if stop_text and self.assistant_close.startswith(stop_text):
            return self.assistant_close[len(stop_text) :]
        return self.assistant_close

    def user_turn(self, observation: str) -> str:
        """A later user turn holding `observation`, through the generation prompt."""
        return self.user_open + observation + self.user_close


def render(tokenizer: Any, messages: list[dict[str, str]], *, generation_prompt: bool) -> str:
    """The chat template applied to `messages`, as text."""
    return tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=generation_prompt
    )
