"""`online_training`: the online-training method as a runner callback, and its snapshot.

The adapters and the optimizer's state are tensors, too large for `state.json`: after an
update they are written beside it, as `online_training/adapters-<update>.safetensors` in
the run folder (atomically), and the callback's state names that file and its SHA-256. The
file is written when the runner saves the state after an update, before `state.json`
names it; the previous file is kept (the state on disk may still name it, if the process
dies in between) and older ones are removed. On resume the saved file is loaded at the
`restore_state` event, so the run goes on with the weights it had, bit for bit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lifelong_gym.errors import CallbackSpecError, ConfigError
from lifelong_gym.methods.budget import model_of
from lifelong_gym.methods.online_training import OnlineTrainingMethod, check_whole

from .callbacks import Callback
from .registry import register_callback

FOLDER = "online_training"
SERVED_ELSEWHERE = (
    "online_training needs a local model (hf:DIR): {agent} is served elsewhere; its weights "
    "cannot be updated from here (vLLM, llama.cpp and other OpenAI-compatible servers are "
    "not supported: run the same weights with --agent hf:DIR)"
)


@register_callback("online_training")
class OnlineTrainingCallback(Callback):
    """Update the agent's LoRA adapters every `every` stream tasks: `steps` AdamW steps at
    `lr`, LoRA of `rank` and `alpha` on `targets` of the last `layers` layers (0: all),
    conversations cut at `max_tokens`.

    `mode` rft: each step on `batch` conversations drawn (with `seed`) from the last
    `buffer` solved ones. `mode` grpo: each step over the reply groups the
    group_self_consistency callback sampled since the last update (from at most `buffer`
    tasks), `batch` replies per forward pass; it needs that callback in the run.
    """

    def __init__(
        self,
        mode: str = "rft",
        every: int = 4,
        steps: int = 4,
        batch: int = 4,
        buffer: int = 64,
        lr: float = 1e-4,
        rank: int = 8,
        alpha: int = 16,
        targets: list[str] | str = ("q_proj", "v_proj"),
        layers: int = 4,
        max_tokens: int = 2048,
        seed: int = 0,
    ):
        try:
            self.method = OnlineTrainingMethod(mode, every, steps, batch, buffer, seed)
            self.lora = lora_settings(lr, rank, alpha, targets, layers, max_tokens, seed)
        except ValueError as error:
            raise CallbackSpecError(f"callback online_training: {error}") from None
        self.learner: Any = None
        self.folder: Path | None = None  # the run folder, known from the first event
        self.adapters: dict[str, Any] | None = None  # the saved file the state names
        self._saved_update = 0  # the update whose weights `adapters` holds

    def needs(self) -> dict[str, str]:
        """grpo learns from the groups group self-consistency samples."""
        if self.method.mode != "grpo":
            return {}
        why = "online_training:mode=grpo learns from the reply groups self-consistency samples"
        return {"group_self_consistency": why}

    def setup(self, agent, env):
        """Refuse an agent without a local transformers model; put LoRA adapters on it."""
        if self.learner is not None:
            return  # a runner run twice: the adapters are on the model already
        model = model_of(agent)
        if not (hasattr(model, "tokenizer") and hasattr(getattr(model, "model", None), "config")):
            raise CallbackSpecError(SERVED_ELSEWHERE.format(agent=agent_name(agent, model)))
        if getattr(agent, "tools", None):
            raise CallbackSpecError("online_training: action_format tools: not yet (use text)")
        from lifelong_gym.training.online import LoraLearner

        try:
            self.learner = LoraLearner(model, **self.lora)
        except ConfigError as error:
            raise CallbackSpecError(f"callback online_training: {error}") from None
        self.method.bind(self.learner, getattr(agent, "system_prompt", None))

    def restore_state(self, run, state, control, **kwargs):
        """A resumed run: load the adapters and optimizer its state names."""
        self.folder = run.output_dir and Path(run.output_dir)
        if self.adapters is not None and self.folder is not None:
            self.learner.load(self.folder / FOLDER / self.adapters["file"], self.adapters["sha256"])

    def on_session_create(self, run, state, control, **kwargs):
        """Learn where the run writes (the adapters' files go there)."""
        self.folder = run.output_dir and Path(run.output_dir)

    def on_environment_complete(self, run, state, control, *, session, **kwargs):
        """The task is scored: keep it if solved; update the weights when one is due."""
        self.method.finish(session)

    def state(self) -> dict[str, Any]:
        """The buffer and counts, and the file holding the adapters after the last update."""
        if self.method.updates != self._saved_update and self.folder is not None:
            self.adapters = self._write_adapters()
            self._saved_update = self.method.updates
        return {**self.method.state(), "adapters": self.adapters}

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back the buffer and counts; the adapters are loaded at `restore_state`."""
        self.method.load_state(state)
        self.adapters = state.get("adapters")
        self._saved_update = self.method.updates

    def _write_adapters(self) -> dict[str, Any]:
        folder = self.folder / FOLDER
        folder.mkdir(exist_ok=True)
        name = f"adapters-{self.method.updates:06d}.safetensors"
        sha256 = self.learner.save(folder / name)
        keep = {name, self.adapters["file"] if self.adapters else ""}
        for old in folder.glob("adapters-*.safetensors"):
            if old.name not in keep:
                old.unlink()
        return {"file": name, "sha256": sha256, "update": self.method.updates}


def lora_settings(lr, rank, alpha, targets, layers, max_tokens, seed) -> dict[str, Any]:
    """The learner's settings from the spec, or a ValueError naming the bad one."""
    targets = [targets] if isinstance(targets, str) else list(targets)
    for name, value in (("rank", rank), ("alpha", alpha), ("max_tokens", max_tokens)):
        check_whole(name, value)
    check_whole("layers", layers, 0, "(0: every layer)")
    if not isinstance(lr, int | float) or isinstance(lr, bool) or not 0 < lr < 1:
        raise ValueError(f"lr={lr!r}: give a learning rate between 0 and 1")
    if not targets or not all(isinstance(t, str) and t for t in targets):
        raise ValueError(f"targets={targets!r}: give module names, e.g. [q_proj, v_proj]")
    return {
        "lr": float(lr),
        "rank": rank,
        "alpha": alpha,
        "targets": targets,
        "layers": layers,
        "max_tokens": max_tokens,
        "seed": seed,
    }


def agent_name(agent: Any, model: Any) -> str:
    """How the refusal names an agent: its model's name, else its class."""
    name = getattr(getattr(model, "config", None), "name", None)
    kind = type(model).__name__ if model is not None else type(agent).__name__
    return f"{kind} {name!r}" if name else f"the {kind} agent"
