"""Greedy parity between a Hugging Face checkpoint and its ONNX export: transformers decodes each prompt greedily and
writes a parity reference; `quarry checkpoints parity` decodes the same prompts with the editor's onnx backend and
compares token for token (the first divergence is named).

    from quarry_trainer.parity import write_reference, run_parity
    write_reference("media/models/tiny-sql", cases, "ref.json")
    run_parity(["node", "dist/cli.js"], "media/models/tiny-sql", "ref.json")
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Message = dict[str, str]


def load(model_dir: str | Path) -> tuple[Any, Any]:
    """The checkpoint and its tokenizer, from local files only."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    return model, tokenizer


def stop_ids(model: Any, tokenizer: Any) -> list[int]:
    """End-of-sequence ids: the generation config's, else the tokenizer's."""
    eos = getattr(model.generation_config, "eos_token_id", None)
    ids = eos if isinstance(eos, list) else [eos] if eos is not None else []
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return sorted(int(i) for i in ids)


def prompt_ids(tokenizer: Any, messages: Sequence[Message]) -> list[int]:
    rendered = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    return list(tokenizer(rendered, add_special_tokens=False)["input_ids"])


def reference(model_dir: str | Path, cases: Sequence[Sequence[Message]], max_new_tokens: int = 48) -> dict[str, Any]:
    """Greedy ids from transformers for each case's messages, in the form `quarry checkpoints parity` reads."""
    from .tiny_model.hf import greedy

    model, tokenizer = load(model_dir)
    stops = stop_ids(model, tokenizer)
    out = []
    for messages in cases:
        ids = prompt_ids(tokenizer, messages)
        out.append(
            {
                "messages": list(messages),
                "max_new_tokens": max_new_tokens,
                "prompt_ids": ids,
                "output_ids": greedy(model, ids, max_new_tokens, set(stops)),
            }
        )
    return {"stop_ids": stops, "cases": out}


def write_reference(model_dir: str | Path, cases: Sequence[Sequence[Message]], path: str | Path, **kw: Any) -> dict:
    ref = reference(model_dir, cases, **kw)
    Path(path).write_text(json.dumps(ref, ensure_ascii=False))
    return ref


def run_parity(quarry: Sequence[str], onnx_dir: str | Path, reference_path: str | Path) -> dict[str, Any]:
    """Runs `quarry checkpoints parity --json`; returns its report ({"equal", "cases"}). Raises on bad input."""
    run = subprocess.run(
        [*quarry, "checkpoints", "parity", "--onnx", str(onnx_dir), "--reference", str(reference_path), "--json"],
        capture_output=True,
        text=True,
    )
    if run.returncode not in (0, 1):
        raise RuntimeError(f"quarry checkpoints parity failed (exit {run.returncode}): {run.stderr.strip()}")
    return json.loads(run.stdout)
