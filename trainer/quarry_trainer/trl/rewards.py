"""Reward functions for TRL's GRPOTrainer.

`quarry_reward` returns the reward each multi-turn episode ended with on `quarry serve-env` (the panel's total, scored
on the whole trajectory). The rollout (rollout.py) hands it over as the extra field `quarry_reward`: TRL 1.16 forwards
every extra key a `rollout_func` returns to the reward functions as a keyword argument
(trl/trainer/grpo_trainer.py, "Any other fields are forwarded to the reward functions"; `_calculate_rewards`).
Each term's contribution is logged beside it through TRL's `log_metric` hook.

`panel_reward(panel)` scores single-turn completions (no environment) with a panel through `/v1/reward`.
"""

from __future__ import annotations

from typing import Any

from quarry_trainer.env import EnvClient


def quarry_reward(completions: list[Any], quarry_reward: list[float] | None = None, **kwargs: Any) -> list[float]:
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
    """A reward function scoring each completion's final SQL with `panel` (for single-turn GRPO)."""
    from quarry_trainer.verl.reward import final_sql

    env = client or EnvClient()

    def reward(
        completions: list[Any], db_id: list[str], gold_sql: list[str], protocol: list[str] | None = None, **_: Any
    ):
        texts = [c[-1]["content"] if isinstance(c, list) else str(c) for c in completions]
        protos = protocol or ["skyrl"] * len(texts)
        items = [
            {"panel": panel, "db": db, "goldSql": gold, "predSql": final_sql(p, t)}
            for t, db, gold, p in zip(texts, db_id, gold_sql, protos, strict=True)
        ]
        return [float(r["total"]) for r in env.reward(items)]

    reward.__name__ = f"quarry_{panel}"
    return reward
