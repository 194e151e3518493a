"""Language-model back-ends: local `transformers` models and OpenAI-compatible servers."""

from .base import LanguageModel, Message, Usage, UsageLog
from .config import HFModelConfig, ModelConfig, ModelConfigError, OpenAIModelConfig

__all__ = [
    "HFModelConfig",
    "LanguageModel",
    "Message",
    "ModelConfig",
    "ModelConfigError",
    "OpenAIModelConfig",
    "Usage",
    "UsageLog",
]
