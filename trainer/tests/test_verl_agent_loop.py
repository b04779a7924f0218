"""Quarry's verl agent loop (`quarry_agent`, quarry_trainer/verl/agent_loop.py) run by verl's own AgentLoopWorker (a
Ray actor, as AgentLoopManager makes it), with verl's LLMServerClient and GlobalRequestLoadBalancer in front of a
scripted token-level server (a Ray actor answering `generate(...)` with TokenOutput, as vLLM's server does), verl's
RewardLoopWorker scoring the batch with quarry_trainer/verl/reward.py, and a real `quarry serve-env`.

Rows are `quarry data rl --protocol sqltrail` records read by verl's RLHFDataset. One episode has a turn without an
action (stopped at </reasoning>: no observation), a malformed turn (an empty <sql>) and an answer; the other runs a
query, then is cut at the response budget inside its reasoning. Each score must be the panel's total on that
trajectory as `quarry reward --trajectory` computes it (the decoded response replayed into a record by
quarry_trainer/replay.py); the model's tokens must be exactly what the server sampled (mask 1, their logprobs), the
environment's tokens mask 0, and the cut turn must end as sampled.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from _verl_agent_support import TINY, agent_loop_config, agent_loop_worker, rollout_batch, scripted_server_class

RESPONSE_LENGTH = 640
STOPS = ["</sql>", "</solution>", "</reasoning>"]  # SQL-Trail's turn stops (core/agent/protocols/sqltrail.ts)
COUNT_Q = "How many singers are there?"
NAMES_Q = "Name the singers."
SCRIPTS = {
    COUNT_Q: [
        "<reasoning>The singer table has one row per singer.</reasoning>",
        "<sql></sql>",
        "<solution>SELECT count(*) FROM singer</solution>",
    ],
    NAMES_Q: [
        "<sql>SELECT name FROM singer</sql>",
        "<reasoning>" + "Every singer has a name and the names are listed in the table above. " * 60,
    ],
}


def _rows(quarry_cli, sql_root: Path, tmp_path: Path) -> Path:
    src = tmp_path / "questions.json"
    src.write_text(
        json.dumps(
            [
                {"db_id": "concert", "question": COUNT_Q, "query": "SELECT count(*) FROM singer"},
                {"db_id": "concert", "question": NAMES_Q, "query": "SELECT name FROM singer"},
            ]
        )
    )
    out = tmp_path / "rl"
    made = subprocess.run(
        [*quarry_cli, "data", "rl", "--dataset", f"spider:{src}", "--db-dir", str(sql_root)]
        + ["--protocol", "sqltrail", "--max-turns", "3", "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    return out / "train.parquet"


@pytest.fixture
def ray_local(env_url, repo_root):
    import ray

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        runtime_env={
            "env_vars": {
                "QUARRY_ENV_URL": env_url,
                "PYTHONPATH": str(repo_root / "trainer"),
                "HF_HUB_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false",
            }
        },
    )
    try:
        yield
    finally:
        ray.shutdown()


def test_verls_worker_runs_quarry_episodes_and_scores_them_with_the_panel(
    ray_local, env_url, quarry_cli, sql_root, tmp_path, repo_root, reward_cli
):
    import ray
    import torch
    from transformers import AutoTokenizer

    from quarry_trainer.env import EnvClient
    from quarry_trainer.replay import replay_response

    train = _rows(quarry_cli, sql_root, tmp_path)
    config = agent_loop_config(repo_root, train, panel="sqltrail", max_turns=3, response_length=RESPONSE_LENGTH)
    server = scripted_server_class().remote(str(TINY), SCRIPTS)
    worker, _ = agent_loop_worker(config, server)
    batch = rollout_batch(config, train)
    out = ray.get(worker.generate_sequences.remote(batch), timeout=300)
    calls = ray.get(server.recorded.remote())
    tok = AutoTokenizer.from_pretrained(str(TINY), local_files_only=True)
    client = EnvClient(env_url)

    questions = [info["question"] for info in batch.non_tensor_batch["extra_info"]]
    for row, question in enumerate(questions):
        mine = sorted((c for c in calls if c["question"] == question), key=lambda c: c["turn"])
        assert [c["turn"] for c in mine] == list(range(len(mine)))
        valid = int(out.batch["attention_mask"][row, -RESPONSE_LENGTH:].sum())
        ids = out.batch["responses"][row, :valid].tolist()
        mask = out.batch["response_mask"][row, :valid].tolist()
        logprobs = out.batch["rollout_log_probs"][row, :valid].tolist()
        # The model's tokens are exactly what the server sampled, with its logprobs; nothing else trains.
        assert [t for t, m in zip(ids, mask, strict=True) if m] == [t for c in mine for t in c["ids"]]
        assert [lp for lp, m in zip(logprobs, mask, strict=True) if m] == pytest.approx(
            [lp for c in mine for lp in c["logprobs"]]
        )
        context = tok.decode([t for t, m in zip(ids, mask, strict=True) if not m], skip_special_tokens=False)
        # Each call ran with the protocol's stop strings and what was left of the response budget.
        for c in mine:
            assert c["params"]["stop"] == STOPS
        assert mine[0]["params"]["max_tokens"] == RESPONSE_LENGTH

        # The score verl's reward loop gave is the panel's total on the same trajectory.
        score = float(out.batch["rm_scores"][row].sum())
        response = tok.decode(ids, skip_special_tokens=True)
        info = batch.non_tensor_batch["extra_info"][row]
        record = replay_response(
            client,
            protocol="sqltrail",
            db="concert",
            question=question,
            gold_sql=batch.non_tensor_batch["reward_model"][row]["ground_truth"],
            response=response,
            panel="sqltrail",
            max_turns=int(info["max_turns"]),
        )
        expected = reward_cli("sqltrail", record)["total"]
        assert score == pytest.approx(expected)
        quarry = out.non_tensor_batch["quarry"][row]
        assert out.non_tensor_batch["score"][row] == pytest.approx(expected)

        if question == COUNT_Q:
            assert len(mine) == 3 and quarry["end"] == "answer" and not quarry["cut"] and quarry["error"] is None
            # The no-action turn got no observation, only the end of its message and the next one's header; the empty
            # <sql> got SQL-Trail's observation; the turns that stopped at a stop string were closed (<|im_end|>).
            assert context == (
                "<|im_end|>\n<|im_start|>assistant\n<|im_end|>\n<|im_start|>user\n<observation>\nYour previous action "
                "is invalid. Think and try again.\nYou have 2 turns left to complete the task.\n</observation>"
                "<|im_end|>\n<|im_start|>assistant\n"
            )
            assert ids[-len(mine[-1]["ids"]) :] == mine[-1]["ids"] and mask[-1] == 1
            assert record["end"] == "answer" and len(record["turns"]) == 3
        else:
            # Cut at the response budget: the turn stays as sampled, no end marker, and the episode ended there.
            assert len(mine) == 2 and quarry["end"] == "budget" and quarry["cut"]
            assert valid == RESPONSE_LENGTH and mask[-1] == 1 and ids[-len(mine[-1]["ids"]) :] == mine[-1]["ids"]
            assert mine[1]["params"]["max_tokens"] == RESPONSE_LENGTH - (len(ids) - len(mine[1]["ids"]))
            assert "Justin Brown" in context and "<|im_end|>" not in tok.decode(mine[1]["ids"])
            assert record["turns"][-1]["finishReason"] == "length"
        assert torch.all(out.batch["response_mask"][row, valid:] == 0)

    scores = {q: float(out.batch["rm_scores"][i].sum()) for i, q in enumerate(questions)}
    assert scores[COUNT_Q] != scores[NAMES_Q]

    # A row whose episode cannot open (no such database): recorded, scored with the panel's failure value (its total
    # on a record that ended in error before a turn), and the batch goes on.
    broken = batch[:1]
    broken.non_tensor_batch["extra_info"] = broken.non_tensor_batch["extra_info"].copy()
    broken.non_tensor_batch["extra_info"][0] = {**broken.non_tensor_batch["extra_info"][0], "db_id": "nowhere"}
    failed = ray.get(worker.generate_sequences.remote(broken), timeout=120)
    quarry = failed.non_tensor_batch["quarry"][0]
    assert quarry["end"] == "error" and "not-found" in quarry["error"]
    ep = client.create_episode(protocol="sqltrail", db="concert", question=COUNT_Q, gold_sql="SELECT 1")
    record = client.request("GET", f"/v1/episodes/{ep['id']}")
    client.end_episode(ep["id"])
    record.update({"turns": [], "end": "error", "error": "failure value", "finalSql": None})
    failure = client.reward(
        {"panel": "sqltrail", "db": "concert", "goldSql": "SELECT count(*) FROM singer", "trajectory": record}
    )["total"]
    assert float(failed.batch["rm_scores"][0].sum()) == pytest.approx(failure)
    assert int(failed.batch["response_mask"][0].sum()) == 0
    assert os.environ.get("QUARRY_ENV_URL") == env_url
