"""Precision defaults for training on a CPU.

TRL 1.16's SFTConfig and GRPOConfig turn `bf16` on by default (trl/trainer/sft_config.py and grpo_config.py: "bf16:
Defaults to True instead of False"), right for GPUs. On a CPU without native bfloat16 (no AVX512-BF16 or AMX) the
autocast is emulated: a step of the tiny model took 52 s with it and 5 s without on this project's 2-core machine.
So a CPU run keeps the model's own float32 unless the user asks for bf16 or fp16 themselves.
"""

from __future__ import annotations

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
