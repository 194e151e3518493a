"""Training on the suite: token-exact episodes, a token-level policy, batched rollouts, GRPO."""

from .chat_tokens import ChatTurns
from .episode import TokenEpisode
from .policy import Generation, TransformersPolicy
from .rollout import collect_episodes

__all__ = ["ChatTurns", "Generation", "TokenEpisode", "TransformersPolicy", "collect_episodes"]
