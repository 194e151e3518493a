"""A GGUF model file, named directly or as the single one in a folder."""

from __future__ import annotations

from pathlib import Path

from lifelong_gym.errors import ModelConfigError


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
