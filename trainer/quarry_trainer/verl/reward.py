"""verl reward function: Quarry's reward panels, through `quarry serve-env`.

Wire it in verl's config (verl 0.9.1 reads it under `reward.`: verl/trainer/ppo/reward.py `get_custom_reward_fn`,
verl/trainer/config/reward/*.yaml):

    reward.custom_reward_function.path=<site-packages>/quarry_trainer/verl/reward.py
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.panel=sqltrail      # optional: default the protocol's panel

and start the service beside the trainer with QUARRY_ENV_URL (and QUARRY_ENV_TOKEN) in the workers' environment.
verl's reward manager (verl/experimental/reward_loop/reward_manager/naive.py) calls
`compute_score(data_source=, solution_str=, ground_truth=, extra_info=)` with the decoded response and the row's
`reward_model.ground_truth` and `extra_info` (as `quarry data rl` writes them: db_id, db_path, protocol, …), and logs
every key of the returned dict: `score` is the panel's total, the other keys its terms' contributions.
"""

from __future__ import annotations

import re
from typing import Any

# verl loads this file by path (load_extern_object), not as a package module: imports are absolute.
from quarry_trainer.env import EnvClient

_client: EnvClient | None = None

# The final answer of each protocol's format (the last one in the response).
_ANSWER = {
    "skyrl": re.compile(r"<solution>(.*?)</solution>", re.S),
    "sqltrail": re.compile(r"<solution>(.*?)</solution>", re.S),
    "mtir": re.compile(r"<answer>(.*?)</answer>", re.S),
    "mtsqlr1": re.compile(r"<answer_sql>(.*?)</answer_sql>", re.S),
    "progress": re.compile(r"<sql>(.*?)</sql>", re.S),
}
_FENCE = re.compile(r"```(?:sql)?\s*(.*?)```", re.S | re.I)


def final_sql(protocol: str, text: str) -> str:
    """The SQL of the last answer block of `protocol`'s format in `text` ('' when there is none)."""
    blocks = _ANSWER.get(protocol, _ANSWER["skyrl"]).findall(text or "")
    if not blocks:
        return ""
    answer = blocks[-1]
    fenced = _FENCE.findall(answer)
    return (fenced[-1] if fenced else answer).strip()


def _env() -> EnvClient:
    global _client
    if _client is None:
        _client = EnvClient()
    return _client


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str,
    extra_info: dict[str, Any] | None = None,
    panel: str | None = None,
    **_: Any,
) -> dict[str, float]:
    info = dict(extra_info or {})
    protocol = str(info.get("protocol") or "skyrl")
    rollout = info.get("rollout_reward_scores") or {}
    scored = rollout.get("quarry") if isinstance(rollout, dict) else None
    if isinstance(scored, dict) and isinstance(scored.get("score"), (int, float)):
        # The multi-turn tool already scored the whole episode on the service.
        return {k: float(v) for k, v in scored.items() if isinstance(v, (int, float))}
    db = info.get("db_id") or info.get("db_path")
    if not db:
        raise ValueError("extra_info needs db_id or db_path (quarry data rl writes both)")
    result = _env().reward(
        {
            "panel": panel or info.get("panel") or protocol,
            "db": db,
            "goldSql": ground_truth,
            "predSql": final_sql(protocol, solution_str),
        }
    )
    out = {"score": float(result["total"])}
    for term in result["terms"]:
        out[term["name"]] = float(term["contribution"])
    return out
