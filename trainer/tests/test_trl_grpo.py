"""A real TRL GRPOTrainer, two steps on the tiny model on the CPU, with Quarry's multi-turn rollout against a real
`quarry serve-env`: every episode runs on the service, the observation tokens are masked, and the rewards the trainer
logs are the service's."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def rl_rows(make_rl_data):
    """Training rows as `quarry data rl` writes them (its JSONL twin of train.parquet), on the session's database."""
    out = make_rl_data(
        [
            {"db_id": "concert", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"},
            {
                "db_id": "concert",
                "question": "List the names of singers from France.",
                "query": "SELECT name FROM singer WHERE country = 'France'",
            },
        ],
        max_turns=3,
    )
    return [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]


def test_grpo_trainer_runs_two_steps_with_quarry_episodes_and_logs_the_services_rewards(
    env_url, rl_rows, repo_root, tmp_path
):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from quarry_trainer.trl.rewards import quarry_reward
    from quarry_trainer.trl.rollout import QuarryRollout

    model_dir = str(repo_root / "media/models/tiny-sql")
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)
    rollout = QuarryRollout(rl_rows, max_new_tokens=48, temperature=1.0)
    config = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        per_device_train_batch_size=2,
        num_generations=2,
        max_steps=2,
        max_completion_length=256,
        learning_rate=1e-5,
        beta=0.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=3,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[quarry_reward],
        args=config,
        train_dataset=Dataset.from_list([{"prompt": r["prompt"], "extra_info": r["extra_info"]} for r in rl_rows]),
        processing_class=tokenizer,
        rollout_func=rollout,
    )
    trainer.train()
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 2
    assert len(rollout.episodes) == 4, "two completions of one prompt per step"
    for i, h in enumerate(logged):
        mine = [e["reward"] for e in rollout.episodes[2 * i : 2 * i + 2]]
        assert h["reward"] == pytest.approx(sum(mine) / 2)
    # Every episode's reward is the panel's total the service computed (skyrl: −1, 0 or 1).
    assert all(e["reward"] in (-1.0, 0.0, 1.0) for e in rollout.episodes)
    assert all(e["messages"][-1]["role"] == "assistant" for e in rollout.episodes)
