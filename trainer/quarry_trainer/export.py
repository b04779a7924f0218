"""ONNX export of a Hugging Face causal-LM checkpoint, in the signature Quarry's onnx backend loads, with a greedy
parity reference beside it (`quarry checkpoints export-onnx` runs this, then checks parity with onnxruntime-node).

    python -m quarry_trainer.export --checkpoint OUTPUT/checkpoint-200 --out models/sql-200 [--prompts prompts.json]

Writes OUT/model.onnx (torch.onnx, opset 17, Optimum's decoder signature: input_ids, attention_mask, position_ids,
past_key_values.N.key/value → logits, present.N.key/value), the tokenizer files and chat template, config.json,
generation_config.json, and OUT/reference.json (transformers' greedy tokens for each prompt). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .parity import DEFAULT_PROMPTS, UNSAFE_EXIT, UnsafeCheckpoint, load, reference


def export(checkpoint: str, out: str, prompts: list[list[dict[str, str]]], max_new_tokens: int = 32) -> dict:
    import torch

    from .tiny_model.hf import export_onnx

    started = time.time()
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    model, tokenizer = load(checkpoint)
    model.eval()
    model.config.save_pretrained(target)
    model.generation_config.save_pretrained(target)
    tokenizer.save_pretrained(target)
    with torch.no_grad():
        export_onnx(model, str(target / "model.onnx"))
    ref = reference(checkpoint, prompts, max_new_tokens=max_new_tokens)
    (target / "reference.json").write_text(json.dumps(ref, ensure_ascii=False))
    return {
        "checkpoint": str(Path(checkpoint).resolve()),
        "out": str(target.resolve()),
        "onnx": str((target / "model.onnx").resolve()),
        "reference": str((target / "reference.json").resolve()),
        "cases": len(ref["cases"]),
        "seconds": round(time.time() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m quarry_trainer.export", description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True, help="a Hugging Face checkpoint folder (config.json + weights)")
    p.add_argument("--out", required=True, help="folder to write the ONNX model and its tokenizer into")
    p.add_argument("--prompts", help="JSON file: a list of chats ([{role, content}, ...]) for the parity reference")
    p.add_argument("--max-new-tokens", type=int, default=32)
    args = p.parse_args(argv)
    if not (Path(args.checkpoint) / "config.json").exists():
        print(f"export: {args.checkpoint} has no config.json: not a Hugging Face checkpoint", file=sys.stderr)
        return 2
    prompts = DEFAULT_PROMPTS
    if args.prompts:
        prompts = json.loads(Path(args.prompts).read_text())
        if not isinstance(prompts, list) or not all(isinstance(c, list) for c in prompts):
            print("export: --prompts must hold a JSON list of chats", file=sys.stderr)
            return 2
    try:
        summary = export(args.checkpoint, args.out, prompts, args.max_new_tokens)
    except UnsafeCheckpoint as err:
        print(f"export: {err}", file=sys.stderr)
        return UNSAFE_EXIT
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
