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


class EpisodeTokenizer:
    """The token ids of each part of an episode, for one tokenizer and its chat template.

    Used by `TransformersPolicy` and by adapters whose tokens come from another engine
    (verl's rollout servers): the first prompt, the template's tokens after a reply and
    around an observation, and a reply's text as the environment receives it.
    """

    def __init__(self, tokenizer: Any, system_prompt: str | None = None):
        self.tokenizer = tokenizer
        self.system_prompt = system_prompt
        self.turns = ChatTurns.from_tokenizer(tokenizer, system_prompt)

    def prompt_ids(self, observation: str) -> list[int]:
        """The first prompt: the chat template applied to `observation`, ready for a reply."""
        head = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        text = render(
            self.tokenizer,
            head + [{"role": "user", "content": observation}],
            generation_prompt=True,
        )
        return self.tokenizer.encode(text, add_special_tokens=False)

    def observation_ids(self, stop_token: int | None, observation: str) -> list[int]:
        """The template's tokens after a reply that ended with `stop_token` (None: cut by
        length): its turn end, then a user turn holding `observation` and the generation
        prompt."""
        return self._encode_after_special(
            self._turn_end(stop_token) + self.turns.user_turn(observation)
        )

    def end_ids(self, stop_token: int | None) -> list[int]:
        """The template's tokens that close the last reply of an episode."""
        return self._encode_after_special(self._turn_end(stop_token))

    def reply_text(self, content_ids: list[int]) -> str:
        """A reply's tokens (without the stop token) decoded as the environment receives them."""
        return self.tokenizer.decode(
            content_ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
        )

    def turn_end_ids(self) -> set[int]:
        """The tokenizer's EOS and the special token that begins the template's turn end."""
        tokenizer = self.tokenizer
        stops = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
        for token in tokenizer.all_special_tokens:
            if self.turns.assistant_close.startswith(token):
                stops.add(tokenizer.convert_tokens_to_ids(token))
        return stops

    def _turn_end(self, stop_token: int | None) -> str:
        stop = None if stop_token is None else self.tokenizer.decode([stop_token])
        return self.turns.after_reply(stop)

    def _encode_after_special(self, text: str) -> list[int]:
        """Tokens of `text` as they are after a special token in a whole conversation.

        Encoding behind an EOS token keeps tokenizers that add a prefix space at the start
        of a text (SentencePiece) from adding one here.
        """
        if not text:
            return []
        anchor = self.tokenizer.encode(self.tokenizer.eos_token, add_special_tokens=False)
        ids = self.tokenizer.encode(self.tokenizer.eos_token + text, add_special_tokens=False)
        if ids[: len(anchor)] != anchor:
            return self.tokenizer.encode(text, add_special_tokens=False)
        return ids[len(anchor) :]
