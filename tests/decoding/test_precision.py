"""The choice of bf16 autocast follows the CPU's own bf16 instructions."""

from pathlib import Path

import pytest

from lifelong_gym.decoding.precision import cpu_flags, native_bf16


def write_cpuinfo(path: Path, flags: str) -> Path:
    path.write_text(f"processor\t: 0\nmodel name\t: test\nflags\t\t: {flags}\n\nprocessor\t: 1\n")
    return path


def test_flags_are_read_from_the_first_cpu(tmp_path):
    cpuinfo = write_cpuinfo(tmp_path / "cpuinfo", "fpu avx2 avx512f avx512_bf16")
    assert cpu_flags(cpuinfo) == {"fpu", "avx2", "avx512f", "avx512_bf16"}


def test_bf16_only_where_the_cpu_computes_it():
    assert native_bf16(frozenset({"avx512f", "avx512_bf16"}))
    assert native_bf16(frozenset({"amx_bf16", "amx_tile"}))
    # AVX-512 alone emulates bf16 (about 3x slower than float32 for SmolLM2)
    assert not native_bf16(frozenset({"avx512f", "avx512bw", "avx512_vnni"}))


def test_an_unreadable_cpuinfo_means_float32(tmp_path):
    assert cpu_flags(tmp_path / "missing") == frozenset()
    assert not native_bf16(cpu_flags(tmp_path / "missing"))


@pytest.mark.parametrize("native", [True, False])
def test_a_bfloat16_policy_on_a_cpu_that_emulates_it_says_so(
    tiny_model_dir, monkeypatch, caplog, native
):
    import torch

    from lifelong_gym.decoding import policy
    from lifelong_gym.training import TransformersPolicy

    monkeypatch.setattr(policy, "native_bf16", lambda: native)
    TransformersPolicy(tiny_model_dir, dtype=torch.bfloat16, device="cpu")
    TransformersPolicy(tiny_model_dir, dtype=torch.float32, device="cpu")
    warned = [r for r in caplog.records if "dtype=float32 is faster here" in r.getMessage()]
    assert len(warned) == (0 if native else 1)
