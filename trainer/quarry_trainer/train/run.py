"""The record of one training run, OUT/run.json: what ran (the recipe or the arguments), on what data (each file's
sha256), with which seed, and the version of every engine package, so two runs can be compared and one reproduced."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PACKAGES = (
    "quarry-trainer",
    "torch",
    "transformers",
    "trl",
    "peft",
    "accelerate",
    "datasets",
    "verl",
    "skyrl-gym",
    "vllm",
)


def sha256_of(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def versions(packages: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for p in packages:
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            out[p] = None
    return out


def write_run(out_dir: str | Path, *, kind: str, config: dict[str, Any], data: Iterable[str | Path], seed: int) -> dict:
    record = {
        "schema": "quarry.run/1",
        "kind": kind,
        "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": config,
        "data": [{"path": str(Path(p).resolve()), "sha256": sha256_of(p)} for p in data],
        "seed": seed,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": versions(),
    }
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    (Path(out_dir) / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    return record
