"""Precision defaults for training on a CPU.

TRL 1.16's SFTConfig and GRPOConfig turn `bf16` on by default (trl/trainer/sft_config.py and grpo_config.py: "bf16:
Defaults to True instead of False"), right for GPUs. On a CPU without native bfloat16 (no AVX512-BF16 or AMX) the
autocast is emulated: a step of the tiny model took 52 s with it and 5 s without on this project's 2-core machine.
So a CPU run keeps the model's own float32 unless the user asks for bf16 or fp16 themselves.

A machine with no GPU at all (torch sees neither CUDA nor MPS) trains on the CPU as `--cpu` / `use_cpu` would, and
says so on stderr: otherwise transformers refuses the bf16 default ("Your setup doesn't support bf16/gpu").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_has_native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether the CPU computes bfloat16 natively (Linux: /proc/cpuinfo's flags; elsewhere: assume not)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
    return any(f in flags for f in NATIVE_BF16_FLAGS)


def cpu_precision(config: dict[str, Any], cpuinfo: str | None = None) -> dict[str, Any]:
    """`config` (TrainingArguments fields) with bf16 off for a CPU run without native bfloat16, unless set."""
    if not config.get("use_cpu") or "bf16" in config or config.get("fp16"):
        return config
    if cpu_has_native_bf16(cpuinfo):
        return config
    return {**config, "bf16": False}


def has_accelerator() -> bool:
    """Whether torch sees a CUDA (or ROCm) GPU or Apple's MPS."""
    import torch

    mps = getattr(torch.backends, "mps", None)
    return torch.cuda.is_available() or bool(mps is not None and mps.is_available())


def cpu_fallback(config: dict[str, Any], accelerator: bool | None = None) -> dict[str, Any]:
    """`config` with use_cpu on when there is no GPU to train on (one stderr line says so); unchanged otherwise."""
    if config.get("use_cpu"):
        return config
    if accelerator is None:
        accelerator = has_accelerator()
    if accelerator:
        return config
    print("quarry_trainer: no GPU found (CUDA or MPS); training on the CPU as --cpu would", file=sys.stderr)
    return {**config, "use_cpu": True}
