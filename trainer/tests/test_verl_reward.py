"""Quarry's verl reward function, loaded by verl's own loader from a config (verl/trainer/ppo/reward.py
get_custom_reward_fn and load_reward_manager), scoring through a real `quarry serve-env`: the whole response is
replayed into a trajectory, and the totals and terms are what `quarry reward --trajectory --json` prints for it."""

from __future__ import annotations

import pytest

GOLD = "SELECT name FROM singer WHERE country = 'France' ORDER BY age"
RESPONSES = [
    "<think>French singers by age</think>\n<solution>" + GOLD + "</solution>",
    "<think>no order</think>\n<solution>SELECT name FROM singer WHERE country = 'France'</solution>",
    "<think>forgot the answer</think>\n<sql>SELECT 1</sql>",
]


ROW = {"db_id": "concert", "question": "French singers by age?", "protocol": "skyrl", "index": 0}


def quarry_reward(reward_cli, panel, response):
    """What `quarry reward --trajectory --json` prints for the response replayed through the service."""
    from quarry_trainer.env import EnvClient
    from quarry_trainer.replay import row_task, score_response

    _, record = score_response(EnvClient(), panel=panel, gold_sql=GOLD, response=response, **row_task(ROW))
    return reward_cli(panel, record)


@pytest.mark.parametrize("panel", ["sqltrail", "skyrl"])
def test_verl_loads_compute_score_from_its_config_and_scores_like_quarry_reward(env_url, reward_cli, repo_root, panel):
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    path = repo_root / "trainer" / "quarry_trainer" / "verl" / "reward.py"
    config = OmegaConf.create(
        {
            "reward": {
                "custom_reward_function": {
                    "path": str(path),
                    "name": "compute_score",
                    "reward_kwargs": {"panel": panel},
                }
            }
        }
    )
    fn = get_custom_reward_fn(config)
    assert fn is not None
    for response in RESPONSES:
        got = fn(
            data_source="quarry/spider",
            solution_str=response,
            ground_truth=GOLD,
            extra_info=dict(ROW),
        )
        printed = quarry_reward(reward_cli, panel, response)
        assert got["score"] == pytest.approx(printed["total"])
        assert {k: v for k, v in got.items() if k != "score"} == pytest.approx(
            {t["name"]: t["contribution"] for t in printed["terms"]}
        )
        if panel == "skyrl":
            # SkyRL-SQL §4.1: right 1 (its comparison is a set of rows: the order does not count), no <solution> a
            # format error −1 (a bare SQL scored 0 here before the response was replayed whole).
            assert got["score"] == [1.0, 1.0, -1.0][RESPONSES.index(response)]


def test_a_score_the_multi_turn_tool_already_made_is_used_as_it_is(env_url):
    from quarry_trainer.verl.reward import compute_score

    got = compute_score(
        "quarry/spider",
        "ignored",
        GOLD,
        {"db_id": "concert", "rollout_reward_scores": {"quarry": {"score": 1.0, "format": 0.0, "exec": 1.0}}},
    )
    assert got == {"score": 1.0, "format": 0.0, "exec": 1.0}


def test_verls_own_config_and_reward_manager_score_a_batch_with_it(env_url, reward_cli, repo_root):
    """verl's Hydra config (ppo_trainer.yaml) composed with the two override lines docs/training.md gives, its
    load_reward_manager building the naive reward manager around compute_score, and that manager scoring DataProto
    items holding the tiny tokenizer's ids of each response."""
    import os

    import numpy as np
    import torch
    import verl
    from hydra import compose, initialize_config_dir
    from transformers import AutoTokenizer
    from verl import DataProto
    from verl.trainer.ppo.reward import load_reward_manager

    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        cfg = compose(
            config_name="ppo_trainer",
            overrides=[
                f"reward.custom_reward_function.path={repo_root / 'trainer/quarry_trainer/verl/reward.py'}",
                "reward.custom_reward_function.name=compute_score",
                "+reward.custom_reward_function.reward_kwargs.panel=sqltrail",
                "actor_rollout_ref.rollout.name=vllm",
            ],
        )
    tokenizer = AutoTokenizer.from_pretrained(str(repo_root / "media/models/tiny-sql"), local_files_only=True)
    manager = load_reward_manager(cfg, tokenizer)
    for response in RESPONSES:
        ids = tokenizer(response, add_special_tokens=False)["input_ids"]
        prompt = tokenizer("Question: French singers?", add_special_tokens=False)["input_ids"]
        data = DataProto.from_dict(
            tensors={
                "responses": torch.tensor([ids]),
                "prompts": torch.tensor([prompt]),
                "attention_mask": torch.ones(1, len(prompt) + len(ids), dtype=torch.long),
            },
            non_tensors={
                "data_source": np.array(["quarry/spider"], dtype=object),
                "reward_model": np.array([{"style": "rule", "ground_truth": GOLD}], dtype=object),
                "extra_info": np.array([dict(ROW)], dtype=object),
            },
        )
        out = manager.loop.run_until_complete(manager.run_single(data))
        printed = quarry_reward(reward_cli, "sqltrail", response)
        assert out["reward_score"] == pytest.approx(printed["total"])
        assert out["reward_extra_info"]["exec"] == pytest.approx(printed["terms"][0]["contribution"])
