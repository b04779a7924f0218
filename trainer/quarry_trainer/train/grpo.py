"""Multi-turn GRPO with TRL's GRPOTrainer on Quarry's environment service — what `quarry train --engine trl` runs.

    python -m quarry_trainer.train.grpo quarry.model=PATH quarry.train_file=DATA/train.jsonl output_dir=RUN \\
        num_generations=4 learning_rate=1e-6 epsilon=0.2 epsilon_high=0.28 beta=0.0 loss_type=dapo ... \\
        [quarry.max_turns=5] [quarry.max_turn_tokens=256] [quarry.filter=mtir] [quarry.zero_variance=skip] \\
        [quarry.curriculum=true] [quarry.greedy_group_ex=true] [quarry.resume=true]

Arguments are `key=value` (values in Hydra's grammar, as `quarry train` writes them). A key without the `quarry.`
prefix is a field of TRL's `GRPOConfig` (trl/trainer/grpo_config.py, TRL 1.16) or of the transformers
`TrainingArguments` it extends; an unknown one stops the run before anything loads. The `quarry.` keys:

| key | what |
| --- | --- |
| `quarry.model` | the policy (a Hugging Face folder or id) |
| `quarry.train_file` | `quarry data rl`'s rows (`train.jsonl`; `train.parquet` is read when given) |
| `quarry.max_turns` | assistant turns per episode (else each row's `extra_info.max_turns`) |
| `quarry.max_turn_tokens` | new tokens per turn |
| `quarry.panel` | a reward panel other than the protocol's own |
| `quarry.filter` | `none` or `mtir` (MTIR-SQL's GRPO-Filter, filters.py) |
| `quarry.zero_variance` | `keep` or `skip` (drop groups with one reward from the loss) |
| `quarry.curriculum` | rows in curriculum order (MTSQL-R1), no shuffling |
| `quarry.greedy_group_ex` | one extra greedy episode per group, for the `greedy_ex` metric |
| `quarry.resume` | continue from the last `checkpoint-N` in `output_dir` |
| `quarry.limit` | train on the first N rows |
| `quarry.shared_prefix` | a group's prompt goes through the model once per turn and in the loss (shared_prefix.py) |

The service is found through QUARRY_ENV_URL / QUARRY_ENV_TOKEN (`launch.sh` starts it). Every logged step goes to
OUTPUT/metrics.jsonl (callbacks.MetricsJsonl: TRL's reward, reward_std, entropy, kl, clip ratios, lengths, plus
Quarry's `quarry/<term>` means, `pass_at_group`, `ex`, `greedy_ex`, `turns`, `filtered`), run.json records the run,
SIGTERM saves and stops (callbacks.StopOnSignal), every rollout is appended to OUTPUT/rollouts.jsonl (its messages,
end, reward, terms and ex, with the step), and the final policy is saved to OUTPUT/final.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from . import filters
from .run import write_run

QUARRY_KEYS = {
    "model": str,
    "train_file": str,
    "max_turns": int,
    "max_turn_tokens": int,
    "panel": str,
    "filter": str,
    "zero_variance": str,
    "curriculum": bool,
    "greedy_group_ex": bool,
    "resume": bool,
    "limit": int,
    "shared_prefix": bool,
}
QUARRY_DEFAULTS: dict[str, Any] = {
    "max_turn_tokens": 256,
    "filter": "none",
    "zero_variance": "keep",
    "curriculum": False,
    "greedy_group_ex": False,
    "resume": False,
    "shared_prefix": False,
}


# What OUTPUT/rollouts.jsonl keeps of each episode (one line per rollout, with the step it trained): the service's
# episode id, the conversation, how it ended, its reward and terms, and whether its final SQL matched the gold.
ROLLOUT_KEYS = ("id", "messages", "end", "reward", "terms", "ex")


# The keyword arguments of TRL's `_get_per_token_logps_and_entropies` that a text-only batch may set; any other
# (images, token types) or the MoE aux loss sends the batch down TRL's own path.
TEXT_ONLY_KWARGS = ("batch_size", "compute_entropy", "compute_aux_loss")


class ArgumentError(ValueError):
    pass


def parse_value(text: str) -> Any:
    """A Hydra override value: a single-quoted string (\\' and \\\\ escaped), or YAML (numbers, booleans, lists)."""
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        return text[1:-1].replace("\\'", "'").replace("\\\\", "\\")
    # YAML 1.1 reads 1e-6 (no dot) as a string; Hydra and Quarry's launches write it so.
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    return yaml.safe_load(text) if text else ""


def split_args(argv: list[str]) -> tuple[dict[str, Any], dict[str, Any], list[str], list[str]]:
    """(quarry settings, GRPOConfig fields, unknown keys, other problems) from `key=value` arguments; later ones win."""
    from trl import GRPOConfig

    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    quarry: dict[str, Any] = dict(QUARRY_DEFAULTS)
    config: dict[str, Any] = {}
    unknown: list[str] = []
    problems: list[str] = []
    for arg in argv:
        key, sep, raw = arg.lstrip("+").partition("=")
        if not sep:
            problems.append(f"{arg!r}: arguments are key=value")
            continue
        value = parse_value(raw)
        if key.startswith("quarry."):
            name = key[len("quarry.") :]
            if name not in QUARRY_KEYS:
                near = difflib.get_close_matches(name, QUARRY_KEYS, n=1)
                unknown.append(key)
                problems.append(f"unknown key {key}" + (f" (did you mean quarry.{near[0]}?)" if near else ""))
                continue
            want = QUARRY_KEYS[name]
            if (want is int and isinstance(value, bool)) or not isinstance(value, want):
                problems.append(f"{key}={raw}: expected {want.__name__}")
                continue
            quarry[name] = value
        elif key in fields:
            config[key] = value
        else:
            near = difflib.get_close_matches(key, fields, n=1)
            unknown.append(key)
            problems.append(f"TRL's GRPOConfig has no field {key!r}" + (f" (did you mean {near[0]}?)" if near else ""))
    for need in ("model", "train_file"):
        if need not in quarry:
            problems.append(f"quarry.{need}= is required")
    if "output_dir" not in config:
        problems.append("output_dir= is required")
    if quarry["filter"] not in filters.FILTERS:
        problems.append(f"quarry.filter must be one of {', '.join(filters.FILTERS)}")
    if quarry["zero_variance"] not in filters.ZERO_VARIANCE:
        problems.append(f"quarry.zero_variance must be one of {', '.join(filters.ZERO_VARIANCE)}")
    return quarry, config, unknown, problems


def parse_args(argv: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(quarry settings, GRPOConfig fields); ArgumentError names every problem."""
    quarry, config, _unknown, problems = split_args(argv)
    if problems:
        raise ArgumentError("; ".join(problems))
    return quarry, config


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    if path.is_dir():
        path = path / "train.jsonl"
    if path.suffix == ".parquet":
        from datasets import Dataset

        return list(Dataset.from_parquet(str(path)))
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        raise ArgumentError(f"{path}: no training rows")
    return rows


def build_trainer(quarry: dict[str, Any], config: dict[str, Any], rows: list[dict[str, Any]], out: Path):
    """The GRPOTrainer subclass with Quarry's rollout, reward, filters and callbacks (not yet training)."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from ..trl.rewards import quarry_reward
    from ..trl.rollout import QuarryRollout
    from .callbacks import MetricsJsonl, StopOnSignal
    from .precision import cpu_fallback, cpu_precision
    from .shared_prefix import shared_prefix_logps

    args = GRPOConfig(**cpu_precision(cpu_fallback({"report_to": "none", "logging_steps": 1, **config})))
    size = args.num_generations
    if size is None:  # TRL groups completions by it (trl/trainer/grpo_config.py num_generations, default 8)
        raise ValueError("num_generations must be a number for GRPO, not null")
    if quarry["curriculum"]:
        rows = filters.curriculum_order(rows)
        args.shuffle_dataset = False
    tokenizer = AutoTokenizer.from_pretrained(quarry["model"])
    model = AutoModelForCausalLM.from_pretrained(quarry["model"])
    rollout = QuarryRollout(
        rows,
        max_new_tokens=quarry["max_turn_tokens"],
        temperature=args.temperature,
        top_p=args.top_p,
        panel=quarry.get("panel"),
        max_turns=quarry.get("max_turns"),
        greedy_per_group=size if quarry["greedy_group_ex"] else 0,
        share_prefix=quarry["shared_prefix"],
    )

    class QuarryGRPOTrainer(GRPOTrainer):
        """GRPOTrainer plus Quarry's per-batch rules: filtered rollouts leave the loss, and episode metrics."""

        def _generate_and_score_completions(self, inputs):
            seen = self._quarry_seen = len(rollout.episodes)
            output = super()._generate_and_score_completions(inputs)
            batch = rollout.episodes[seen:]
            mode = "train" if self.model.training else "eval"
            if len(batch) == output["completion_ids"].size(0) and len(batch) % size == 0:
                keep = filters.keep_mask(batch, size, quarry["filter"], quarry["zero_variance"])
                output = filters.drop_from_loss(output, keep, self.accelerator.gather)
                self._metrics[mode]["filtered"].append(1 - sum(keep) / len(keep))
                for name, value in filters.group_stats([e.get("ex") for e in batch], size).items():
                    self._metrics[mode][name].append(value)
                self._metrics[mode]["turns"].append(sum(len(e["turns"]) for e in batch) / len(batch))
            if batch and self.accelerator.is_main_process:
                with (out / "rollouts.jsonl").open("a", encoding="utf-8") as f:
                    for e in batch:
                        record = {"step": self.state.global_step + 1, **{k: e.get(k) for k in ROLLOUT_KEYS}}
                        f.write(json.dumps(record) + "\n")
            greedy = rollout.greedy[-(len(batch) // size) :] if rollout.greedy and batch else []
            known = [g["ex"] for g in greedy if g.get("ex") is not None]
            if known:
                self._metrics[mode]["greedy_ex"].append(sum(known) / len(known))
            return output

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            """TRL's rewards, with the rollouts GRPO-Filter drops taken out of their group's baseline (filters.py)."""
            import torch

            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            batch = rollout.episodes[getattr(self, "_quarry_seen", len(rollout.episodes)) :]
            if quarry["filter"] != "mtir" or len(batch) != len(prompts):
                return rewards
            local = torch.tensor([not filters.mtir_invalid(e) for e in batch], device=rewards.device)
            return filters.exclude_from_baseline(rewards, self.accelerator.gather(local).tolist())

        def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, *a, **kw):
            plain = (
                not a
                and not kw.get("compute_aux_loss")
                and all(v is None for k, v in kw.items() if k not in TEXT_ONLY_KWARGS)
            )
            if quarry["shared_prefix"] and plain:
                with self.accelerator.autocast():
                    shared = shared_prefix_logps(
                        model,
                        input_ids,
                        attention_mask,
                        logits_to_keep,
                        temperature=self.temperature,
                        compute_entropy=bool(kw.get("compute_entropy")),
                    )
                if shared is not None:
                    return shared[0], shared[1], None
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, *a, **kw
            )

    trainer = QuarryGRPOTrainer(
        model=model,
        reward_funcs=[quarry_reward],
        args=args,
        train_dataset=Dataset.from_list([{"prompt": r["prompt"], "extra_info": r["extra_info"]} for r in rows]),
        processing_class=tokenizer,
        rollout_func=rollout,
        callbacks=[MetricsJsonl(out), StopOnSignal()],
    )
    return trainer, rollout, tokenizer


def train(argv: list[str]) -> dict[str, Any]:
    from transformers.trainer_utils import get_last_checkpoint

    quarry, config = parse_args(argv)
    out = Path(config["output_dir"])
    rows = read_rows(quarry["train_file"])
    if quarry.get("limit"):
        rows = rows[: quarry["limit"]]
    train_file = Path(quarry["train_file"])
    data = [train_file / "train.jsonl" if train_file.is_dir() else train_file]
    write_run(out, kind="grpo", config={"quarry": quarry, "grpo": config}, data=data, seed=config.get("seed", 42))
    trainer, rollout, tokenizer = build_trainer(quarry, config, rows, out)
    resume = get_last_checkpoint(str(out)) if quarry["resume"] and out.exists() else None
    trainer.train(resume_from_checkpoint=resume)
    stopped = trainer.state.global_step < trainer.state.max_steps
    if not stopped:
        trainer.save_model(str(out / "final"))
        tokenizer.save_pretrained(out / "final")
    rewards = [e["reward"] for e in rollout.episodes]
    return {
        "out": str(out.resolve()),
        "steps": trainer.state.global_step,
        "resumedFrom": resume,
        "stoppedEarly": stopped,
        "episodes": len(rollout.episodes),
        "meanReward": sum(rewards) / len(rewards) if rewards else None,
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    try:
        result = train(argv)
    except ArgumentError as e:
        print(f"quarry_trainer.train.grpo: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
