"""`ModelPool`: model names to model objects, each created once and shared."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .models import LanguageModel, ModelConfig, ModelConfigError

_CONFIG = TypeAdapter(ModelConfig)


def parse_model_config(raw: Mapping[str, Any] | ModelConfig) -> ModelConfig:
    """A validated model config from a mapping (a YAML entry); one clear error otherwise."""
    if not isinstance(raw, Mapping):
        return raw
    if raw.get("backend") not in ("hf", "openai"):
        raise ModelConfigError(
            f"model config {raw.get('name', '?')!r}: backend must be 'hf' (a local model folder) "
            f"or 'openai' (an OpenAI-compatible server), not {raw.get('backend')!r}"
        )
    try:
        return _CONFIG.validate_python(dict(raw))
    except ValidationError as error:
        problems = "; ".join(_describe(item, raw.get("backend")) for item in error.errors())
        raise ModelConfigError(f"model config {raw.get('name', '?')!r}: {problems}") from None


def _describe(item: Mapping[str, Any], backend: Any) -> str:
    """One validation problem as `field: message`, without pydantic's union tag and prefix."""
    loc = [str(part) for part in item["loc"]]
    if loc and loc[0] == backend:
        loc = loc[1:]
    return f"{'.'.join(loc) or 'config'}: {item['msg'].removeprefix('Value error, ')}"


def create_model(config: ModelConfig) -> LanguageModel:
    """Build the model a config describes (loads weights or opens a client)."""
    if config.backend == "hf":
        from .models.hf import TransformersModel

        return TransformersModel(config)
    from .models.openai_chat import OpenAIChatModel

    return OpenAIChatModel(config)


class ModelPool:
    """The run's models by name: configs are checked at once, each model is built on first use.

    Agents and callbacks that ask for the same name get the same object, so weights are
    loaded once. `load_all()` builds every model up front (before any task starts).
    """

    def __init__(self, configs: Iterable[Mapping[str, Any] | ModelConfig] = ()):
        self._configs: dict[str, ModelConfig] = {}
        self._models: dict[str, LanguageModel] = {}
        self._lock = threading.Lock()
        for raw in configs:
            config = parse_model_config(raw)
            if config.name in self._configs:
                raise ModelConfigError(f"model name {config.name!r} is configured twice")
            self._configs[config.name] = config

    @property
    def names(self) -> list[str]:
        """The configured model names."""
        return list(self._configs)

    def config(self, name: str) -> ModelConfig:
        """The config of model `name`."""
        try:
            return self._configs[name]
        except KeyError:
            known = ", ".join(repr(n) for n in self._configs) or "none"
            raise ModelConfigError(
                f"no model named {name!r} in the pool (configured: {known}); "
                "add it under `models:` in the run's config"
            ) from None

    def get(self, name: str) -> LanguageModel:
        """The model called `name`, built the first time it is asked for."""
        config = self.config(name)
        with self._lock:
            if name not in self._models:
                self._models[name] = create_model(config)
            return self._models[name]

    def load_all(self) -> None:
        """Build every configured model now, so a bad one fails before any task starts."""
        for name in self._configs:
            self.get(name)

    def close(self) -> None:
        """Close every model built so far."""
        with self._lock:
            models, self._models = self._models, {}
        for model in models.values():
            model.close()
