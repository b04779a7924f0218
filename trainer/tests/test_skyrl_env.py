"""Quarry's skyrl-gym environment, built by `skyrl_gym.make` (as SkyRL's generator builds it) from a `quarry data
rl`-shaped row, playing a scripted SkyRL-SQL episode against a real `quarry serve-env`: it ends with the reward
`quarry reward` gives the same trajectory's final SQL, and an unfinished episode is ended on close."""

from __future__ import annotations

import json
import subprocess

import pytest

GOLD = "SELECT count(*) FROM singer WHERE country = 'France'"


def row_extras(question="How many singers are from France?"):
    return {
        "data_source": "quarry/spider",
        "ability": "text2sql",
        "reward_model": {"style": "rule", "ground_truth": GOLD},
        "extra_info": {"index": 0, "db_id": "concert", "question": question, "protocol": "skyrl", "max_turns": 5},
    }


def test_skyrl_gym_makes_the_environment_and_a_scripted_episode_gets_the_quarry_reward(env_url, quarry_cli, sql_root):
    import skyrl_gym

    from quarry_trainer.skyrl import ENV_ID, register

    register()
    register()  # idempotent
    env = skyrl_gym.make(ENV_ID, env_config={"panel": "skyrl"}, extras=row_extras())
    messages, meta = env.init([{"role": "user", "content": "(the prompt quarry data rl wrote)"}])
    assert "How many singers are from France?" in messages[-1]["content"]
    assert meta["episode_id"]

    first = env.step("<think>look at the table</think>\n<sql>SELECT country, count(*) FROM singer GROUP BY country")
    assert not first["done"] and first["reward"] == 0.0
    assert first["observations"][0]["role"] == "user"
    assert "France" in first["observations"][0]["content"]

    last = env.step(f"<think>two</think>\n<solution>{GOLD}</solution>")
    assert last["done"] and last["observations"] == []
    printed = subprocess.run(
        [*quarry_cli, "reward", "--panel", "skyrl", "--db", str(sql_root / "concert" / "concert.sqlite")]
        + ["--gold-sql", GOLD, "--pred-sql", GOLD, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert last["reward"] == pytest.approx(json.loads(printed.stdout)["total"]) == 1.0
    assert last["metadata"]["terms"] == {"format": 0, "exec": 1}
    assert env.get_metrics() == {"quarry/format": 0, "quarry/exec": 1}


def test_a_format_failure_scores_minus_one_and_an_unfinished_episode_is_ended_on_close(env_url):
    import skyrl_gym

    from quarry_trainer.env import EnvClient, EnvServiceError
    from quarry_trainer.skyrl import ENV_ID, register

    register()
    env = skyrl_gym.make(ENV_ID, env_config={}, extras=row_extras())
    env.init([])
    last = env.step(f"<solution>{GOLD}</solution>")  # no <think>: SkyRL-SQL §4.1 format failure
    assert last["done"] and last["reward"] == -1.0

    open_env = skyrl_gym.make(ENV_ID, env_config={}, extras=row_extras())
    _, meta = open_env.init([])
    open_env.close()
    with pytest.raises(EnvServiceError) as err:
        EnvClient().step(meta["episode_id"], "<think>x</think><sql>SELECT 1</sql>")
    assert err.value.status == 404
