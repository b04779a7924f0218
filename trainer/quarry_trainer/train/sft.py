"""Supervised fine-tuning with TRL's SFTTrainer on `quarry data sft` conversations (or any `quarry.sft/1` JSONL):
loss on the messages flagged `loss` (the model's own turns; the prompt and observations are masked, masks.py), packing,
gradient accumulation, learning-rate schedules, metrics.jsonl and run.json, a clean stop on SIGTERM that saves first,
and resume from the last checkpoint.

    python -m quarry_trainer.train.sft --model media/models/tiny-sql --data OUT/sft.jsonl --out runs/sft \\
        [--epochs 3 | --max-steps N] [--lr 1e-5] [--batch-size 8] [--grad-accum 1] [--max-length 4096] \\
        [--scheduler cosine] [--warmup-ratio 0.03] [--packing] [--save-steps 100] [--seed 42] [--resume] \\
        [--no-gradient-checkpointing] [--precision auto|fp32|bf16]

Keys are TRL 1.16's SFTConfig / transformers' TrainingArguments fields (trl/trainer/sft_config.py,
transformers/training_args.py): num_train_epochs, max_steps, learning_rate, per_device_train_batch_size,
gradient_accumulation_steps, max_length, lr_scheduler_type, warmup_ratio, packing, save_steps, logging_steps, seed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .masks import tokenize_with_masks
from .run import write_run


def read_examples(path: str | Path) -> list[dict[str, Any]]:
    """quarry.sft/1 lines (JSONL): each with `messages` [{role, content, loss}]."""
    out = []
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        ex = json.loads(line)
        msgs = ex.get("messages")
        if not isinstance(msgs, list) or not msgs:
            raise ValueError(f"{path}:{i}: no messages")
        out.append(ex)
    if not out:
        raise ValueError(f"{path}: no examples")
    return out


def build_dataset(tokenizer: Any, examples: list[dict[str, Any]], max_length: int | None) -> Any:
    from datasets import Dataset

    rows = [tokenize_with_masks(tokenizer, ex["messages"], max_length) for ex in examples]
    rows = [r for r in rows if any(r["assistant_masks"])]
    return Dataset.from_list(rows)


def sft_fields(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """SFTConfig's fields for the arguments (before the CPU defaults of precision.py).

    `--precision fp32` sets `bf16` off (TrainingArguments' `bf16`, transformers/training_args.py; TRL 1.16's SFTConfig
    turns it on by default, trl/trainer/sft_config.py), so a CPU with native bfloat16 (AVX512-BF16, AMX), where
    precision.py keeps TRL's default, trains as one without does: `npm run train:demo` gives the same SFT model on both.
    `bf16` sets it on; `auto` (the default) leaves it to TRL and precision.py.
    """
    fields = dict(
        output_dir=str(out),
        num_train_epochs=args.epochs,
        max_steps=args.max_steps if args.max_steps is not None else -1,
        learning_rate=args.lr,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum,
        max_length=args.max_length,
        lr_scheduler_type=args.scheduler,
        warmup_ratio=args.warmup_ratio,
        packing=args.packing,
        save_steps=args.save_steps,
        logging_steps=1,
        seed=args.seed,
        report_to="none",
        use_cpu=args.cpu,
        dataloader_num_workers=0,
        gradient_checkpointing=args.gradient_checkpointing,
    )
    if args.precision != "auto":
        fields["bf16"] = args.precision == "bf16"
    return fields


def train(args: argparse.Namespace) -> dict[str, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.trainer_utils import get_last_checkpoint
    from trl import SFTConfig, SFTTrainer

    from .callbacks import MetricsJsonl, StopOnSignal
    from .precision import cpu_fallback, cpu_precision

    data = Path(args.data)
    if data.is_dir():
        data = data / "sft.jsonl"
    out = Path(args.out)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model)
    dataset = build_dataset(tokenizer, read_examples(data), args.max_length)
    fields = sft_fields(args, out)
    config = SFTConfig(**cpu_precision(cpu_fallback(fields)))
    write_run(out, kind="sft", config={k: v for k, v in vars(args).items()}, data=[data], seed=args.seed)
    trainer = SFTTrainer(
        model=model,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[MetricsJsonl(out), StopOnSignal()],
    )
    resume = get_last_checkpoint(str(out)) if args.resume and out.exists() else None
    result = trainer.train(resume_from_checkpoint=resume)
    stopped = trainer.state.global_step < trainer.state.max_steps
    if not stopped:
        trainer.save_model(str(out / "final"))
        tokenizer.save_pretrained(out / "final")
    return {
        "out": str(out.resolve()),
        "steps": trainer.state.global_step,
        "resumedFrom": resume,
        "stoppedEarly": stopped,
        "trainLoss": result.training_loss,
        "examples": len(dataset),
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m quarry_trainer.train.sft", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a Hugging Face model folder or hub id")
    p.add_argument("--data", required=True, help="quarry data sft's folder (sft.jsonl) or a quarry.sft/1 JSONL file")
    p.add_argument("--out", required=True)
    p.add_argument("--epochs", type=float, default=3.0)
    p.add_argument("--max-steps", type=int)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--max-length", type=int, default=4096)
    p.add_argument("--scheduler", default="cosine")
    p.add_argument("--warmup-ratio", type=float, default=0.03)
    p.add_argument("--packing", action="store_true")
    p.add_argument("--save-steps", type=int, default=100)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint-N in --out")
    p.add_argument("--cpu", action="store_true", help="train on the CPU even when a GPU is there")
    p.add_argument(
        "--precision",
        choices=("auto", "fp32", "bf16"),
        default="auto",
        help="fp32: bf16 off on every device (the same model on CPUs with and without native bfloat16); "
        "auto: TRL's bf16 default, off for a CPU run without native bfloat16",
    )
    p.add_argument(
        "--no-gradient-checkpointing",
        dest="gradient_checkpointing",
        action="store_false",
        help="keep activations instead of recomputing them (TRL turns checkpointing on by default: it saves GPU "
        "memory on big models and only costs time on a small one)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    print(json.dumps(train(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
