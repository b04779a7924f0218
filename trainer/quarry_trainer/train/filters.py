"""What Quarry adds to TRL's GRPO, as small functions over one generation batch (no trainer, no model), so each can be
checked by hand on a few numbers:

- `zero_variance` — completions whose group (the G rollouts of one prompt) all earned the same reward. Their
  advantages are zero, so they teach nothing, but under a token-mean loss they still count in the normaliser and
  shrink every other sequence's gradient. `skip` drops them from the loss (DAPO's dynamic sampling keeps only groups
  with 0 < accuracy < 1; Quarry masks instead of resampling, which keeps TRL's batch shapes).
- `mtir_invalid` — MTIR-SQL's GRPO-Filter (§3.1, eq. 3: keep rollouts with F(x, y) > τ): the paper does not publish
  F or τ. Its text says the filter "discards invalid rollouts" and cites SimpleTIR's filtering of empty rounds, so
  Quarry's F is 1 for a rollout that ended with an answer and has no empty or unparseable turn, else 0, with τ = 0.5.
  Eq. 3 trains on T_filtered alone, so a filtered rollout is out of its group's baseline too (`exclude_from_baseline`:
  its reward becomes NaN, which TRL's nan-aware group mean and std pass over and whose advantage TRL sets to 0). Kept
  in, an invalid rollout's low reward would pull the group mean down and hand the valid rollouts beside it, right or
  wrong, a positive advantage for merely being valid.
- `group_stats` — pass@G (a group with at least one rollout whose final SQL matched the gold) and EX (the fraction
  of rollouts that matched), for metrics.jsonl.
- `curriculum_order` — MTSQL-R1's curriculum (§3.3.3): rows in order of their `extra_info.curriculum_level`
  (`quarry data rl --curriculum-bins`), easiest first, stable within a level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

FILTERS = ("none", "mtir")
ZERO_VARIANCE = ("keep", "skip")


def groups(n: int, size: int) -> list[range]:
    if size <= 0 or n % size != 0:
        raise ValueError(f"{n} completions do not split into groups of {size}")
    return [range(i, i + size) for i in range(0, n, size)]


def zero_variance(rewards: Sequence[float], size: int, tol: float = 1e-9) -> list[bool]:
    """Per completion: True when every reward of its group equals the first (within `tol`)."""
    out = [False] * len(rewards)
    for g in groups(len(rewards), size):
        same = all(abs(rewards[i] - rewards[g.start]) <= tol for i in g)
        for i in g:
            out[i] = same
    return out


def mtir_invalid(episode: dict[str, Any]) -> bool:
    """GRPO-Filter's F(x, y) ≤ τ for one rollout: it did not end with an answer, or a turn was empty or unparseable."""
    if episode.get("end") != "answer":
        return True
    for turn in episode.get("turns") or []:
        if not str(turn.get("text", "")).strip():
            return True
        if turn.get("action") == "invalid":
            return True
    return False


def keep_mask(
    episodes: Sequence[dict[str, Any]], size: int, filter_name: str = "none", zero_var: str = "keep"
) -> list[bool]:
    """Which completions stay in the loss."""
    if filter_name not in FILTERS:
        raise ValueError(f"unknown filter {filter_name!r}: one of {', '.join(FILTERS)}")
    if zero_var not in ZERO_VARIANCE:
        raise ValueError(f"unknown zero-variance rule {zero_var!r}: one of {', '.join(ZERO_VARIANCE)}")
    keep = [True] * len(episodes)
    if filter_name == "mtir":
        keep = [k and not mtir_invalid(e) for k, e in zip(keep, episodes, strict=True)]
    if zero_var == "skip":
        flat = zero_variance([float(e.get("reward") or 0.0) for e in episodes], size)
        keep = [k and not z for k, z in zip(keep, flat, strict=True)]
    return keep


def exclude_from_baseline(rewards_per_func: Any, keep: Sequence[bool]) -> Any:
    """TRL's gathered rewards (a completions × reward functions tensor) with the rows not kept set to NaN: TRL 1.16
    treats such a row as unscorable (trl/trainer/grpo_trainer.py `_generate_and_score_completions`): out of the group's
    nanmean and nanstd, advantage 0, out of the logged reward's mean. When no row is kept they are returned as
    they are."""
    import torch

    # With every rollout filtered there is no baseline to protect (all of them leave the loss), and TRL would log no
    # `reward` for the step at all: the rewards go through as they are, so the step's reward is still charted.
    if all(keep) or not any(keep):
        return rewards_per_func
    out = rewards_per_func.clone()
    out[~torch.tensor(list(keep), dtype=torch.bool, device=out.device)] = torch.nan
    return out


def drop_from_loss(output: dict[str, Any], keep: Sequence[bool], gather=None) -> dict[str, Any]:
    """TRL's scored batch with the rows not kept taken out of the loss: their `tool_mask` (TRL's mask of the model's
    own tokens, which Quarry's rollout fills from `env_mask`) zeroed, and `num_items_in_batch` — the token count the
    `dapo` loss divides by — counted again over what is left (`gather` sums it across processes, as TRL does)."""
    import torch

    if all(keep) or "tool_mask" not in output:
        return output
    rows = torch.tensor(list(keep), device=output["tool_mask"].device, dtype=output["tool_mask"].dtype).unsqueeze(1)
    output["tool_mask"] = output["tool_mask"] * rows
    count = (output["completion_mask"] * output["tool_mask"]).sum()
    output["num_items_in_batch"] = gather(count).sum() if gather is not None else count
    return output


def group_stats(ex: Sequence[bool | None], size: int) -> dict[str, float]:
    """pass@G and EX over the rollouts whose correctness is known."""
    known = [g for g in groups(len(ex), size) if all(ex[i] is not None for i in g)]
    if not known:
        return {}
    solved = sum(1 for g in known if any(ex[i] for i in g))
    hits = sum(1 for g in known for i in g if ex[i])
    return {"pass_at_group": solved / len(known), "ex": hits / (len(known) * size)}


def curriculum_order(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    def level(row: dict[str, Any]) -> float:
        value = (row.get("extra_info") or {}).get("curriculum_level")
        return float(value) if isinstance(value, (int, float)) else float("inf")

    return sorted(rows, key=level)
