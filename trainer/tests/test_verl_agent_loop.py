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

TINY = Path(__file__).resolve().parents[2] / "media/models/tiny-sql"
RESPONSE_LENGTH = 640
STOPS = ["</sql>", "</solution>", "</reasoning>"]  # SQL-Trail's turn stops (core/agent/protocols/sqltrail.ts)
COUNT_Q = "How many singers are there?"
NAMES_Q = "Name the singers."
EOS = "<EOS>"
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


def _server_class():
    import ray
    from transformers import AutoTokenizer
    from verl.workers.rollout.replica import TokenOutput

    @ray.remote(num_cpus=0)
    class ScriptedServer:
        """Samples the scripted turn of the conversation in `prompt_ids` (found by its question, the turn by the
        assistant headers so far), stopping like vLLM: at the first token that completes a stop string, an appended
        end token, or max_tokens. Every answer is recorded."""

        def __init__(self, model: str, scripts: dict[str, list[str]]):
            self.tok = AutoTokenizer.from_pretrained(model, local_files_only=True)
            self.scripts = scripts
            self.calls: list[dict] = []

        async def generate(self, request_id, prompt_ids, sampling_params, image_data=None, video_data=None, **_):
            prompt = self.tok.decode(prompt_ids, skip_special_tokens=False)
            question = next(q for q in self.scripts if q in prompt)
            turn = prompt.count("<|im_start|>assistant") - 1
            text = self.scripts[question][turn]
            ids = self.tok.encode(text.removesuffix(EOS), add_special_tokens=False)
            if text.endswith(EOS):
                ids.append(self.tok.convert_tokens_to_ids("<|im_end|>"))
            stops = sampling_params.get("stop") or []
            for k in range(1, len(ids) + 1):
                if any(s in self.tok.decode(ids[:k]) for s in stops):
                    ids = ids[:k]
                    break
            ids = ids[: sampling_params["max_tokens"]]
            logprobs = [-0.001 * (i + 1) - 0.1 * turn for i in range(len(ids))]
            self.calls.append(
                {"question": question, "turn": turn, "params": dict(sampling_params), "ids": ids, "logprobs": logprobs}
            )
            return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed", extra_fields={})

        def recorded(self) -> list[dict]:
            return self.calls

    return ScriptedServer


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


def _config(repo_root: Path, train: Path):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from quarry_trainer.preflight import verl_config_dir

    trainer = repo_root / "trainer/quarry_trainer"
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(verl_config_dir()), version_base=None):
        return compose(
            config_name="ppo_trainer",
            overrides=[
                f"actor_rollout_ref.model.path={TINY}",
                "actor_rollout_ref.rollout.name=vllm",
                f"data.train_files={train}",
                f"data.val_files={train}",
                "data.max_prompt_length=3072",
                f"data.max_response_length={RESPONSE_LENGTH}",
                "actor_rollout_ref.rollout.multi_turn.enable=true",
                "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=3",
                f"actor_rollout_ref.rollout.agent.agent_loop_config_path={trainer}/verl/agent_loop.yaml",
                "actor_rollout_ref.rollout.agent.default_agent_loop=quarry_agent",
                f"reward.custom_reward_function.path={trainer}/verl/reward.py",
                "reward.custom_reward_function.name=compute_score",
                "+reward.custom_reward_function.reward_kwargs.panel=sqltrail",
            ],
        )


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


def _batch(config, train: Path):
    from transformers import AutoTokenizer
    from verl import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    tok = AutoTokenizer.from_pretrained(str(TINY), local_files_only=True)
    dataset = RLHFDataset(data_files=[str(train)], tokenizer=tok, config=config.data, processor=None)
    rows = [dataset[i] for i in range(len(dataset))]
    batch = DataProto.from_single_dict(collate_fn(rows))
    batch.meta_info = {"global_steps": 1, "validate": False}
    return batch


def test_verls_worker_runs_quarry_episodes_and_scores_them_with_the_panel(
    ray_local, env_url, quarry_cli, sql_root, tmp_path, repo_root, reward_cli
):
    import ray
    import torch
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.workers.rollout.llm_server import LLMServerClient
    from verl.workers.rollout.router import GlobalRequestLoadBalancer

    from quarry_trainer.env import EnvClient
    from quarry_trainer.replay import replay_response

    train = _rows(quarry_cli, sql_root, tmp_path)
    config = _config(repo_root, train)
    server = _server_class().remote(str(TINY), SCRIPTS)
    balancer = ray.remote(GlobalRequestLoadBalancer).options(num_cpus=0).remote(servers={"scripted": server})
    rewarder = ray.remote(RewardLoopWorker).options(num_cpus=0).remote(config)
    worker = (
        ray.remote(AgentLoopWorker)
        .options(num_cpus=0)
        .remote(config, LLMServerClient(config, load_balancer_handle=balancer), None, [rewarder])
    )
    batch = _batch(config, train)
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
