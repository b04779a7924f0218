"""A model's whole response scored by a Quarry panel: replayed, turn by turn, through a real episode of
`quarry serve-env` into a trajectory record, so the panel's format, turn and process terms judge what the model wrote
(not only the SQL of its last answer, which the service counts as well-formed whatever surrounded it).

verl's `compute_score` (verl/reward.py) and TRL's `panel_reward` (trl/rewards.py) both call `score_response`; the
SkyRL adapter (skyrl/env.py) needs no replay, its trainer steps the episode itself. The record it returns is what
`quarry reward --trajectory` scores, with the same total.

How a response becomes turns (the environment parses each one; nothing here reads SQL or tags of a protocol):
  - a turn ends at the first of the stop strings the service gave for it (`stop` of the create and step replies):
    a closing stop (`</sql>`, `</solution>`, `</tool_call>`) ends the turn and belongs to it; an opening stop
    (MTIR-SQL's `<tool_response>`) is where the model began writing the environment's part, so the turn ends before it;
  - after a turn the episode did not end with, what follows is the environment's observation when the response holds
    one (verl's multi-turn responses do: the tool-response turns of the chat template, whose role names stay as bare
    `user` / `assistant` lines once the special tokens are skipped): a block opening with the observation's first tag,
    or with an opening stop, or the observation's own text, is skipped with the role lines around it. A response with
    no observations (one generation, TRL single-turn) just goes on with the model's next turn;
  - the episode's last turn keeps everything the model wrote after it, and keeps it as written: the service restores
    a stop string it thinks a backend stripped (episodes.ts calls restoreStop with finish reason 'stop'), but a
    response here is the model's whole output, so a last turn cut inside an open action block (the token limit) stays
    cut, is recorded with finish reason 'length', and fails the format terms;
  - a response that ends before the episode does ended without an answer: the record ends with 'budget'.
"""

from __future__ import annotations

import re
from typing import Any

from quarry_trainer.env import EnvClient

# Role names a chat template leaves on their own line when verl decodes a response with skip_special_tokens=True.
_GAP = re.compile(r"\A\s*(?:(?:user|tool|assistant)[ \t]*\n)?\s*")
_OPEN_TAG = re.compile(r"\A\s*<([A-Za-z_][\w-]*)>")
_CLOSE_STOP = re.compile(r"</([A-Za-z_][\w-]*)>")


def _gap(text: str) -> str:
    return _GAP.sub("", text, count=1)


def split_turn(text: str, stops: list[str]) -> tuple[str, str]:
    """The next turn of `text` (up to its first stop string) and the rest."""
    hits = [(text.find(s), s) for s in stops if s and text.find(s) >= 0]
    if not hits:
        return text, ""
    at, stop = min(hits, key=lambda h: (h[0], -len(h[1])))
    end = at + len(stop) if stop.startswith("</") else at
    return text[:end], text[end:]


def skip_observation(rest: str, observation: str | None, stops: list[str]) -> str:
    """`rest` without the environment's observation (and role lines) at its start, when it holds one there."""
    rest = _gap(rest)
    tags = [m.group(1) for m in [_OPEN_TAG.match(observation or "")] if m]
    tags += [m.group(1) for s in stops for m in [re.fullmatch(r"<([A-Za-z_][\w-]*)>", s)] if m]
    for tag in tags:
        if rest.startswith(f"<{tag}>"):
            close = rest.find(f"</{tag}>")
            return "" if close < 0 else _gap(rest[close + len(tag) + 3 :])
    body = (observation or "").strip()
    if body and rest.startswith(body):
        return _gap(rest[len(body) :])
    return rest


def _cut_in_action(text: str, stops: list[str]) -> bool:
    """Whether `text` ends inside an action block that one of `stops` would have closed (cut at the token limit)."""
    for s in stops:
        m = _CLOSE_STOP.fullmatch(s)
        if m and text.rfind(f"<{m.group(1)}>") > text.rfind(s):
            return True
    return False


def _last_turn(record: dict, text: str, stops: list[str]) -> None:
    turn = record["turns"][-1]
    turn["assistant"] = text
    turn["finishReason"] = "length" if _cut_in_action(text, stops) else "stop"


def replay_response(
    client: EnvClient,
    *,
    protocol: str,
    db: str,
    question: str,
    gold_sql: str,
    response: str,
    panel: str | None = None,
    max_turns: int | None = None,
    evidence: str | None = None,
    history: list[dict] | None = None,
) -> dict:
    """The trajectory record (quarry.trajectory/1) of `response` replayed through a new episode."""
    ep = client.create_episode(
        protocol=protocol,
        db=db,
        question=question,
        gold_sql=gold_sql,
        max_turns=max_turns,
        evidence=evidence,
        history=history,
        panel=panel,
    )
    eid = ep["id"]
    stops: list[str] = ep["stop"]
    open_episode = True
    try:
        # GET /v1/episodes/{id}: the record so far (server.ts, episodes.ts `record`): task, protocol with its config
        # and budget, prompt; an ended episode is gone, so the last turn is written from its step reply.
        record = client.request("GET", f"/v1/episodes/{eid}")
        rest = response or ""
        while True:
            text, after = split_turn(rest, stops)
            reply = client.step(eid, text)
            info = reply["info"]
            if reply["done"]:
                open_episode = False
                obs = reply.get("observation")
                record["turns"].append(
                    {
                        "index": len(record["turns"]),
                        "assistant": text,
                        "action": info["action"],
                        "observations": [{"role": "user", "content": obs}] if obs else [],
                        "exec": info["exec"],
                        "finishReason": "stop",
                        "usage": {"promptTokens": 0, "completionTokens": 0},
                        "timings": {"modelMs": 0, "envMs": 0},
                    }
                )
                _last_turn(record, text + after, stops)
                record["end"] = info["end"] or "answer"
                record["finalSql"] = info["finalSql"]
                break
            rest = skip_observation(after, reply.get("observation"), stops)
            record = client.request("GET", f"/v1/episodes/{eid}")
            if not rest.strip():
                # The response ended before the episode did: no answer.
                _last_turn(record, text, stops)
                record["end"] = "budget"
                record["finalSql"] = None
                break
            stops = reply["stop"]
    finally:
        if open_episode:
            client.end_episode(eid)
    record["error"] = None
    record["meta"] = {**(record.get("meta") or {}), "source": "quarry_trainer.replay"}
    return record


def _plain(value: Any) -> Any:
    """A row value as plain JSON (verl reads Parquet rows: numpy integers and arrays)."""
    return value.tolist() if hasattr(value, "tolist") else value


def row_task(info: dict[str, Any]) -> dict[str, Any]:
    """replay_response's task arguments from a `quarry data rl` row's `extra_info` (db_id or db_path, question,
    protocol, max_turns, evidence, history); the gold comes from `reward_model.ground_truth`."""
    db = info.get("db_id") or info.get("db_path")
    if not db:
        raise ValueError("extra_info needs db_id or db_path (quarry data rl writes both)")
    max_turns = info.get("max_turns")
    return {
        "protocol": str(info.get("protocol") or "skyrl"),
        "db": str(db),
        "question": str(info.get("question") or ""),
        "max_turns": int(max_turns) if max_turns is not None else None,
        "evidence": info.get("evidence") or None,
        "history": _plain(info.get("history")) or None,
    }


def score_response(client: EnvClient, *, panel: str | None = None, **task: Any) -> tuple[dict, dict]:
    """(`/v1/reward`'s answer — what `quarry reward --json` prints — and the record) for a response; see
    replay_response for the arguments. The panel defaults to the protocol's own."""
    record = replay_response(client, panel=panel, **task)
    result = client.reward(
        {"panel": panel or task["protocol"], "db": task["db"], "goldSql": task["gold_sql"], "trajectory": record}
    )
    return result, record
