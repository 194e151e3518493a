"""Which floating-point type trains fastest on this CPU."""

from __future__ import annotations

from pathlib import Path

# CPU flags (Linux /proc/cpuinfo) of instructions that compute in bfloat16
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The flags of the first CPU that `cpuinfo` lists (empty where it cannot be read)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def native_bf16(flags: frozenset[str] | None = None) -> bool:
    """True when the CPU computes in bfloat16 itself (AVX512-BF16 or AMX).

    Only then is bf16 autocast worth it: where the CPU lacks these instructions, PyTorch
    converts every operand to float32 and back, and a forward and backward under autocast
    is slower than in float32 (measured in docs/results.md).
    """
    return bool((cpu_flags() if flags is None else flags) & NATIVE_BF16_FLAGS)
