"""`TransformersModel`: a local model run with Hugging Face `transformers`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from lifelong_gym.tool_calls import with_argument_objects

from ..base import AgentContextLimitError, AgentError, AgentOutOfMemoryError
from .base import LanguageModel, Message, Usage
from .config import HFModelConfig, ModelConfigError

logger = logging.getLogger(__name__)


class TransformersModel(LanguageModel):
    """Chat-template prompts, left-padded batched generation, CUDA when present, else CPU.

    Each reply's usage is counted here: the prompt's tokens (padding left out) and the
    tokens generated, up to and including the end-of-sequence token that stopped it.
    """

    reports_usage = True

    def __init__(self, config: HFModelConfig):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.config = config
        self._torch = torch
        self.device = torch.device(
            config.device or ("cuda" if torch.cuda.is_available() else "cpu")
        )
        try:
            # a GGUF file is de-quantized on load (the `gguf` package), to float32 on CPU
            gguf = {"gguf_file": config.gguf_file} if config.gguf_file else {}
            self.tokenizer = AutoTokenizer.from_pretrained(config.folder, **gguf)
            model = AutoModelForCausalLM.from_pretrained(
                config.folder, dtype=self._dtype(config), **gguf
            )
        except (OSError, ValueError) as error:
            raise ModelConfigError(
                f"cannot load model {config.name!r} from {config.path}: {error}"
            ) from error
        self.model = model.to(self.device).eval()
        self._lock = threading.Lock()  # one generation at a time when agents and callbacks share it
        if config.chat_template is not None:
            self.tokenizer.chat_template = config.chat_template
        if not self.tokenizer.chat_template:
            raise ModelConfigError(
                f"the tokenizer at {config.path} has no chat template; "
                f"set chat_template in the config of model {config.name!r}"
            )
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.context_window: int | None = config.max_context_tokens or getattr(
            model.config, "max_position_embeddings", None
        )

    def _dtype(self, config: HFModelConfig) -> Any:
        if config.dtype is not None:
            dtype = getattr(self._torch, config.dtype, None)
            if not isinstance(dtype, self._torch.dtype):
                raise ModelConfigError(
                    f"dtype {config.dtype!r} of model {config.name!r} is not a torch dtype"
                )
            return dtype
        return "auto" if self.device.type == "cuda" else self._torch.float32

    def prompt(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None
    ) -> str:
        """The text the model reads for `messages` (the chat template, ready for a reply).

        `tools` are rendered by the chat template, as the model was trained to read them;
        past calls are given to it with their arguments as objects, as templates expect.
        """
        if not tools:
            return self.tokenizer.apply_chat_template(
                list(messages), tokenize=False, add_generation_prompt=True
            )
        return self.tokenizer.apply_chat_template(
            [with_argument_objects(m) for m in messages],
            tools=list(tools),
            tokenize=False,
            add_generation_prompt=True,
        )

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """The prompt length of `messages` in tokens."""
        return len(self.tokenizer(self.prompt(messages), add_special_tokens=False)["input_ids"])

    def generate(
        self, batch: Sequence[Sequence[Message]], tools: Sequence[dict[str, Any]] | None = None
    ) -> list[str]:
        """One reply per history, generated `batch_size` histories at a time.

        With `tools` the reply is the model's text as is: the tool-call markup its chat
        template taught it (`<tool_call>{...}</tool_call>`) is what an environment parses.
        """
        size = self.config.batch_size
        replies: list[str] = []
        usages: list[Usage] = []
        with self._lock:
            for start in range(0, len(batch), size):
                chunk_replies, chunk_usages = self._generate_chunk(
                    batch[start : start + size], tools
                )
                replies.extend(chunk_replies)
                usages.extend(chunk_usages)
        self.usage.add(usages)
        return replies

    def _generate_chunk(
        self, chunk: Sequence[Sequence[Message]], tools: Sequence[dict[str, Any]] | None
    ) -> tuple[list[str], list[Usage]]:
        torch = self._torch
        try:
            inputs = self.tokenizer(
                [self.prompt(messages, tools) for messages in chunk],
                add_special_tokens=False,
                padding=True,
                return_tensors="pt",
            ).to(self.device)
            prompt_length = int(inputs["input_ids"].shape[1])
            longest = int(inputs["attention_mask"].sum(dim=1).max())
            room = self.config.max_new_tokens
            if self.context_window is not None:
                room = min(room, self.context_window - longest)
            if room < 1:
                raise AgentContextLimitError(
                    f"the history takes {longest} tokens; the context window of model "
                    f"{self.config.name!r} is {self.context_window}"
                )
            sampling = self.config.temperature > 0
            with torch.inference_mode():
                output = self.model.generate(
                    **inputs,
                    max_new_tokens=room,
                    do_sample=sampling,
                    temperature=self.config.temperature if sampling else None,
                    top_p=self.config.top_p if sampling else None,
                    top_k=None,
                    pad_token_id=self.tokenizer.pad_token_id,
                )
            generated = output[:, prompt_length:]
            prompts = inputs["attention_mask"].sum(dim=1).tolist()
            usages = [
                Usage(int(p), self._generated_length(row))
                for p, row in zip(prompts, generated, strict=True)
            ]
            return self.tokenizer.batch_decode(generated, skip_special_tokens=True), usages
        except AgentError:
            raise
        except torch.cuda.OutOfMemoryError as error:
            torch.cuda.empty_cache()
            raise AgentOutOfMemoryError(f"model {self.config.name!r}: {error}") from error
        except Exception as error:
            logger.exception("generation failed")
            raise AgentError(
                f"model {self.config.name!r}: {type(error).__name__}: {error}"
            ) from error

    def _generated_length(self, row: Any) -> int:
        """The tokens of one generated row up to and including its first end-of-sequence
        token (what follows is padding, while the batch's other rows went on)."""
        stops = self.model.generation_config.eos_token_id
        stops = [] if stops is None else [stops] if isinstance(stops, int) else list(stops)
        for position, token in enumerate(row.tolist()):
            if token in stops:
                return position + 1
        return int(row.shape[0])

    def close(self) -> None:
        """Drop the weights and free accelerator memory."""
        del self.model
        if self.device.type == "cuda":
            self._torch.cuda.empty_cache()
