"""Greedy parity between a Hugging Face checkpoint and its ONNX export: transformers decodes each prompt greedily and
writes a parity reference; `quarry checkpoints parity` decodes the same prompts with the editor's onnx backend and
compares token for token (the first divergence is named).

    from quarry_trainer.parity import write_reference, run_parity
    write_reference("media/models/tiny-sql", cases, "ref.json")
    run_parity(["node", "dist/cli.js"], "media/models/tiny-sql", "ref.json")

Served parity (`quarry checkpoints load --serve` runs it): the same prompts are sent to an OpenAI-compatible server
(temperature 0, the same token budget), its text is tokenized with the checkpoint's tokenizer and compared token for
token with transformers' greedy ids:

    python -m quarry_trainer.parity served --checkpoint DIR --base-url http://127.0.0.1:8000/v1 --model NAME
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Message = dict[str, str]

# Prompts for the parity check when none are given: short text-to-SQL chats of the kind the editor sends.
DEFAULT_PROMPTS: list[list[Message]] = [
    [
        {
            "role": "user",
            "content": "Database schema:\nCREATE TABLE singer (id INTEGER, name TEXT, age INTEGER);\n"
            "Question: How many singers are there?",
        }
    ],
    [
        {
            "role": "user",
            "content": "Database schema:\nCREATE TABLE book (id INTEGER, title TEXT, year INTEGER);\n"
            "Question: Which books came out after 2000?",
        }
    ],
    [{"role": "user", "content": "Question: List the names of all employees ordered by salary."}],
]


# The exit code of `python -m quarry_trainer.export` and `… parity served` when a weights file was refused as unsafe
# (src/app/checkpoints/load.ts and src/cli/commands/checkpoints.ts say so instead of suggesting a broken Python).
UNSAFE_EXIT = 3


class UnsafeCheckpoint(Exception):
    """A weights file refused as unsafe: a pickle that would run code when loaded (torch.load weights_only)."""


def _refused(model_dir: str | Path, err: BaseException) -> UnsafeCheckpoint | None:
    import pickle

    said = str(err)
    if not isinstance(err, pickle.UnpicklingError) and "Weights only load failed" not in said:
        return None
    pickles = sorted(p.name for p in Path(model_dir).iterdir() if p.suffix in (".bin", ".pt", ".pth", ".pkl"))
    what = ", ".join(pickles) if pickles else "a weights file"
    return UnsafeCheckpoint(
        f"refused {what} in {model_dir} as unsafe: it is a pickle that would run code when loaded, and Quarry loads "
        "weights only (torch.load weights_only); nothing in it was run. Use a checkpoint saved as safetensors "
        "(save_pretrained's default), or convert this one only if you trust where it came from."
    )


def load(model_dir: str | Path) -> tuple[Any, Any]:
    """The checkpoint and its tokenizer, from local files only; UnsafeCheckpoint for a pickle that would run code."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True)
    except Exception as err:  # only the weights-only refusal becomes UnsafeCheckpoint; the rest is re-raised
        refused = _refused(model_dir, err)
        if refused is None:
            raise
        raise refused from None
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


def first_divergence(expected: Sequence[int], got: Sequence[int]) -> dict[str, Any] | None:
    """The first position where two token lists differ (a missing token is None), or None when they are equal."""
    for i in range(max(len(expected), len(got))):
        e = expected[i] if i < len(expected) else None
        g = got[i] if i < len(got) else None
        if e != g:
            return {"position": i, "expected": e, "got": g}
    return None


def chat(base_url: str, model: str, messages: Sequence[Message], max_tokens: int, timeout: float = 300) -> str:
    """One greedy (temperature 0) chat completion from an OpenAI-compatible server: the answer's text."""
    body = json.dumps({"model": model, "messages": list(messages), "temperature": 0, "max_tokens": max_tokens})
    req = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions", data=body.encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as res:
        answer = json.loads(res.read())
    return answer["choices"][0]["message"]["content"] or ""


def text_divergence(tokenizer: Any, expected: Sequence[int], text: str) -> dict[str, Any] | None:
    """Where a served answer (text) leaves transformers' greedy tokens: the first token position i whose decoded
    prefix expected[:i+1] is no longer a prefix of the text (or the text goes on past the last token), or None when
    the text is exactly the tokens' decoding. Text is compared, not re-tokenized ids: a tokenizer may split a string
    it did not produce differently (two tokens merged into one) without the model having said anything else."""
    for i in range(len(expected)):
        if not text.startswith(tokenizer.decode(list(expected[: i + 1]), skip_special_tokens=True)):
            rest = text[len(tokenizer.decode(list(expected[:i]), skip_special_tokens=True)) :]
            got = tokenizer(rest, add_special_tokens=False)["input_ids"]
            return {"position": i, "expected": int(expected[i]), "got": int(got[0]) if got else None}
    if text != tokenizer.decode(list(expected), skip_special_tokens=True):
        rest = text[len(tokenizer.decode(list(expected), skip_special_tokens=True)) :]
        got = tokenizer(rest, add_special_tokens=False)["input_ids"]
        return {"position": len(expected), "expected": None, "got": int(got[0]) if got else None}
    return None


def served_parity(
    checkpoint: str | Path, base_url: str, model: str, cases: Sequence[Sequence[Message]], max_new_tokens: int = 32
) -> dict[str, Any]:
    """transformers' greedy ids for each prompt against the served model's answer (the server returns text, not ids;
    stop tokens are not part of the text, so they are left out of the expected)."""
    ref = reference(checkpoint, cases, max_new_tokens=max_new_tokens)
    _, tokenizer = load(checkpoint)
    stops = set(ref["stop_ids"])
    outcomes = []
    for i, case in enumerate(ref["cases"]):
        expected = [t for t in case["output_ids"] if t not in stops]
        text = chat(base_url, model, case["messages"], max_new_tokens)
        d = text_divergence(tokenizer, expected, text)
        outcomes.append({"index": i, "equal": d is None, "firstDivergence": d, "expected": expected, "text": text})
    return {"equal": all(o["equal"] for o in outcomes), "cases": outcomes}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m quarry_trainer.parity")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("served", help="greedy parity between a checkpoint and an OpenAI-compatible server")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
    s.add_argument("--model", required=True, help="the model name the server answers to")
    s.add_argument("--prompts", help="JSON file: a list of chats")
    s.add_argument("--max-new-tokens", type=int, default=32)
    args = p.parse_args(argv)
    prompts = json.loads(Path(args.prompts).read_text()) if args.prompts else DEFAULT_PROMPTS
    try:
        report = served_parity(args.checkpoint, args.base_url, args.model, prompts, args.max_new_tokens)
    except UnsafeCheckpoint as err:
        print(f"parity: {err}", file=sys.stderr)
        return UNSAFE_EXIT
    except OSError as err:
        print(f"parity: the server at {args.base_url} did not answer: {err}", file=sys.stderr)
        return 2
    print(json.dumps(report))
    return 0 if report["equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
