"""verl reward function: Quarry's reward panels, through `quarry serve-env`.

Wire it in verl's config (verl 0.9.1 reads it under `reward.`: verl/trainer/ppo/reward.py `get_custom_reward_fn`,
verl/trainer/config/reward/*.yaml):

    reward.custom_reward_function.path=<site-packages>/quarry_trainer/verl/reward.py
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.panel=sqltrail      # optional: default the protocol's panel

and start the service beside the trainer with QUARRY_ENV_URL (and QUARRY_ENV_TOKEN) in the workers' environment.
verl's reward manager (verl/experimental/reward_loop/reward_manager/naive.py) calls
`compute_score(data_source=, solution_str=, ground_truth=, extra_info=)` with the decoded response and the row's
`reward_model.ground_truth` and `extra_info` (as `quarry data rl` writes them: db_id, db_path, question, protocol,
max_turns, …), and logs every key of the returned dict: `score` is the panel's total, the other keys its terms'
contributions.

`solution_str` is the whole decoded response (naive.py: `tokenizer.decode(valid_response_ids,
skip_special_tokens=True)`; in a multi-turn rollout the tool responses are part of it). When Quarry's agent loop
(agent_loop.py, `quarry_agent`) played the episode on the service, the score it put on the rollout is returned as it
is (`extra_info["reward_scores"]["quarry"]` on verl's streaming reward loop, `extra_info["rollout_reward_scores"]
["quarry"]` on its batch path: naive.py). Otherwise (verl's tool agent loop, MTIR-SQL) the response is replayed turn
by turn through a real episode of the row's protocol (quarry_trainer/replay.py) and the panel scores that trajectory,
so a response with no answer, a malformed turn or an answer cut at the token limit fails the format terms the way it
does in `quarry bench` and on SkyRL (SkyRL-SQL §4.1: `I don't know` is −1, not 0).
"""

from __future__ import annotations

from typing import Any

# verl loads this file by path (load_extern_object), not as a package module: imports are absolute.
from quarry_trainer.env import EnvClient
from quarry_trainer.replay import row_task, score_response

_client: EnvClient | None = None


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
    scored = rollout_score(info)
    if scored is not None:
        # Quarry's agent loop already scored the whole episode on the service.
        return scored
    task = row_task(info)
    result, _ = score_response(
        _env(),
        panel=panel or info.get("panel") or task["protocol"],
        gold_sql=ground_truth,
        response=solution_str or "",
        **task,
    )
    return terms_of(result)


def rollout_score(info: dict[str, Any]) -> dict[str, float] | None:
    """The score quarry_trainer/verl/agent_loop.py put on the rollout, when it did: verl's streaming reward loop passes
    the loop's extra fields inside `extra_info` (`reward_scores`; AgentLoopWorker._compute_score's
    `tool_extra_fields`), its batch path the `reward_scores` column as `rollout_reward_scores` (naive.py)."""
    for source in (info.get("rollout_reward_scores"), info.get("reward_scores")):
        scored = source.get("quarry") if isinstance(source, dict) else None
        if isinstance(scored, dict) and isinstance(scored.get("score"), (int, float)):
            return {k: float(v) for k, v in scored.items() if isinstance(v, (int, float))}
    return None


def terms_of(result: dict) -> dict[str, float]:
    """{"score": total, <term>: contribution, …} of a `/v1/reward` answer."""
    out = {"score": float(result["total"])}
    for term in result["terms"]:
        out[term["name"]] = float(term["contribution"])
    return out
