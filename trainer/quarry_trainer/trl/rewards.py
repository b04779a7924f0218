"""Reward functions for TRL's GRPOTrainer.

`quarry_reward` returns the reward each multi-turn episode ended with on `quarry serve-env` (the panel's total, scored
on the whole trajectory). The rollout (rollout.py) hands it over as the extra field `quarry_reward`: TRL 1.16 forwards
every extra key a `rollout_func` returns to the reward functions as a keyword argument
(trl/trainer/grpo_trainer.py, "Any other fields are forwarded to the reward functions"; `_calculate_rewards`).
Each term's contribution is logged beside it through TRL's `log_metric` hook.

`panel_reward(panel)` scores completions made without the environment (single-turn GRPO) with a panel: each
completion is replayed through a real episode of its row's protocol (quarry_trainer/replay.py, the same replay verl's
compute_score uses) and the panel scores that trajectory, so format and turn terms see what the model wrote.
"""

from __future__ import annotations

from typing import Any

from quarry_trainer.env import EnvClient
from quarry_trainer.replay import row_task, score_response


def quarry_reward(
    completions: list[Any], quarry_reward: list[float] | None = None, **kwargs: Any
) -> list[float | None]:
    """TRL's reward function (trl/trainer/grpo_trainer.py RewardFunc: None would mean no reward for a completion;
    Quarry's rollout scores every one)."""
    if quarry_reward is None:
        raise ValueError(
            "quarry_reward needs the quarry rollout (quarry_trainer.trl.rollout.QuarryRollout) as rollout_func"
        )
    log_metric = kwargs.get("log_metric")
    terms: list[dict[str, float] | None] = kwargs.get("quarry_terms") or []
    if log_metric is not None and terms:
        names = sorted({k for t in terms if t for k in t})
        for name in names:
            values = [t[name] for t in terms if t and name in t]
            if values:
                log_metric(f"quarry/{name}", sum(values) / len(values))
    return [float(r) for r in quarry_reward]


def panel_reward(panel: str, client: EnvClient | None = None):
    """A reward function scoring each whole completion with `panel` (for single-turn GRPO).

    It reads the dataset's columns TRL forwards as keyword arguments (trl/trainer/grpo_trainer.py
    `_calculate_rewards`: every column but the prompt): `extra_info` and `reward_model` as `quarry data rl` writes
    them, or flat `db_id`, `gold_sql`, `question`, `protocol` and `max_turns` columns.
    """
    env = client or EnvClient()

    def reward(completions: list[Any], **columns: Any) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else str(c) for c in completions]
        out = []
        for i, text in enumerate(texts):
            info = _row_info(columns, i)
            gold = info.pop("gold_sql")
            result, _ = score_response(env, panel=panel, gold_sql=gold, response=text, **row_task(info))
            out.append(float(result["total"]))
        return out

    reward.__name__ = f"quarry_{panel}"
    return reward


def _row_info(columns: dict[str, Any], i: int) -> dict[str, Any]:
    """Row i's extra_info (with its gold as `gold_sql`) from the columns TRL passed."""
    info = dict((columns.get("extra_info") or [None] * (i + 1))[i] or {})
    for key in ("db_id", "question", "protocol", "max_turns"):
        if columns.get(key) is not None:
            info[key] = columns[key][i]
    reward_model = (columns.get("reward_model") or [None] * (i + 1))[i] or {}
    gold = columns["gold_sql"][i] if columns.get("gold_sql") is not None else reward_model.get("ground_truth")
    if not gold:
        raise ValueError("panel_reward needs each row's gold: a gold_sql column or reward_model.ground_truth")
    info["gold_sql"] = gold
    return info
