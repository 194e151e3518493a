"""`TokenEpisode`: one finished episode as the token ids a policy-gradient update needs."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TokenEpisode:
    """One episode, token-exact, shaped like verl's agent-loop output and SkyRL's generator output.

    `prompt_ids` is the first prompt (the chat template applied to the opening observation,
    ending with the generation prompt). `completion_ids` is everything after it, in order:
    the tokens the model generated, kept exactly as sampled, and the environment's turns as
    the chat template's tokens. `loss_mask` is 1 on generated tokens and 0 on the
    environment's; `logprobs` holds the sampling log-probability of each generated token
    (0 where the mask is 0). `messages` is the conversation the model took part in, as chat
    messages (the replies as the environment received them).
    """

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    reward: float = 0.0
    status: str = ""
    outcome: str = ""
    task_index: int = -1
    skills: list[str] = field(default_factory=list)
    turns: int = 0
    messages: list[dict[str, str]] = field(default_factory=list)

    @property
    def input_ids(self) -> list[int]:
        """The whole episode: `prompt_ids + completion_ids`."""
        return self.prompt_ids + self.completion_ids

    @property
    def generated_tokens(self) -> int:
        """How many tokens the model generated in this episode."""
        return sum(self.loss_mask)

    def add_generated(self, token_ids: list[int], logprobs: list[float]) -> None:
        """Append tokens the model generated (mask 1) with their sampling logprobs."""
        self.completion_ids += token_ids
        self.loss_mask += [1] * len(token_ids)
        self.logprobs += logprobs

    def add_environment(self, token_ids: list[int]) -> None:
        """Append tokens the environment (or the chat template) wrote (mask 0)."""
        self.completion_ids += token_ids
        self.loss_mask += [0] * len(token_ids)
        self.logprobs += [0.0] * len(token_ids)
