"""One reward, whatever the engine: the same rollouts (good, a malformed turn, cut at the token limit, no answer, a
wrong answer), in the protocols of SkyRL-SQL, MTIR-SQL and SQL-Trail, scored with each protocol's own panel by
  - the SkyRL adapter (skyrl_gym.make builds QuarryTextToSqlEnv; each turn is a step of a real episode),
  - verl's compute_score, loaded by verl's own loader, given the response as verl decodes a multi-turn rollout (the
    environment's observations between the turns, role names left as bare lines by skip_special_tokens),
  - TRL's panel_reward, given the turns as one completion (no observations, the single-turn case),
  - `quarry reward --trajectory` (the CLI, in a subprocess) on the record the replay built,
all against one real `quarry serve-env`, must give the same total, and the total the table says.

The issue's own examples are here too: `I don't know` is −1 on the skyrl panel (SkyRL-SQL §4.1), not the 0 a bare
empty SQL got; MTIR `blah` loses the format reward (−0.1) instead of gaining it (+0.1).
"""

from __future__ import annotations

import json

import pytest

GOLD = "SELECT name FROM singer WHERE country = 'France' ORDER BY age"
WRONG = "SELECT name FROM singer WHERE country = 'Netherlands'"
PROBE_SQL = "SELECT name, country, age FROM singer"


def mtir_call(sql: str) -> str:
    args = {"db_name": "concert", "sql": sql}
    return "\n<tool_call>\n" + json.dumps({"name": "sql-execute_sql_query", "arguments": args}) + "\n</tool_call>"


def mtir_answer(sql: str) -> str:
    return f"<think>The French singers, youngest first.</think>\n<answer>```sql\n{sql}\n```</answer>"


# protocol → rollout → (max_turns, the model's turns). Each rollout runs its episode to the end (the SkyRL adapter's
# trainer would otherwise go on generating): SQL-Trail asks for one last generation once its budget is spent.
ROLLOUTS: dict[str, dict[str, tuple[int, list[str]]]] = {
    "skyrl": {
        "good": (
            2,
            [
                f"<think>Look at the singers.</think>\n<sql>{PROBE_SQL}</sql>",
                f"<think>By age.</think>\n<solution>{GOLD}</solution>",
            ],
        ),
        "malformed turn": (2, [f"<sql>{PROBE_SQL}</sql>", f"<think>By age.</think>\n<solution>{GOLD}</solution>"]),
        "truncated": (
            2,
            [f"<think>Look.</think>\n<sql>{PROBE_SQL}</sql>", "<think>The French singers by age, so the query"],
        ),
        "no answer": (1, ["I don't know"]),
        "wrong answer": (
            2,
            [f"<think>Look.</think>\n<sql>{PROBE_SQL}</sql>", f"<think>Dutch.</think>\n<solution>{WRONG}</solution>"],
        ),
    },
    "mtir": {
        "good": (2, ["<think>Look at the singers.</think>" + mtir_call(PROBE_SQL), mtir_answer(GOLD)]),
        "malformed turn": (2, [mtir_call(PROBE_SQL).strip(), mtir_answer(GOLD)]),
        "truncated": (2, ["<think>Look.</think>" + mtir_call(PROBE_SQL), "<think>The French singers by age, so the"]),
        "no answer": (1, ["blah"]),
        "wrong answer": (2, ["<think>Look.</think>" + mtir_call(PROBE_SQL), mtir_answer(WRONG)]),
    },
    "sqltrail": {
        "good": (
            2,
            [
                f"<think>Look at the singers.</think>\n<sql>{PROBE_SQL}</sql>",
                f"<think>By age.</think>\n<solution>{GOLD}</solution>",
            ],
        ),
        "malformed turn": (
            2,
            ["<think>Look.</think>\n<sql></sql>", f"<think>By age.</think>\n<solution>{GOLD}</solution>"],
        ),
        "truncated": (
            1,
            [f"<think>Look.</think>\n<sql>{PROBE_SQL}</sql>", "<think>The French singers by age, so the query"],
        ),
        "no answer": (1, [f"<think>Look.</think>\n<sql>{PROBE_SQL}</sql>", "I don't know"]),
        "wrong answer": (
            2,
            [f"<think>Look.</think>\n<sql>{PROBE_SQL}</sql>", f"<think>Dutch.</think>\n<solution>{WRONG}</solution>"],
        ),
    },
}

# (protocol = panel, rollout) → the total every engine must give.
EXPECTED: dict[tuple[str, str], float] = {
    # SkyRL-SQL §4.1: −1 invalid format, 0 valid but wrong, 1 valid and right.
    ("skyrl", "good"): 1.0,
    ("skyrl", "malformed turn"): -1.0,
    ("skyrl", "truncated"): -1.0,
    ("skyrl", "no answer"): -1.0,
    ("skyrl", "wrong answer"): 0.0,
    # MTIR-SQL §3.3: format ±0.1, execution ±0.1, result ±1, each withheld once an earlier one fails.
    ("mtir", "good"): 1.2,
    ("mtir", "malformed turn"): -0.1,
    ("mtir", "truncated"): -0.1,
    ("mtir", "no answer"): -0.1,
    ("mtir", "wrong answer"): -0.8,
    # SQL-Trail: 5·exec + 2·turns + schema + bigram + syntax + format. Format reads the final output only (eq. 11),
    # and the gold is medium (Spider hardness), so r_turns is 1 for any episode of at most 3 turns (eq. 7).
    ("sqltrail", "good"): 11.0,
    ("sqltrail", "malformed turn"): 11.0,
    ("sqltrail", "truncated"): 2.0,
    ("sqltrail", "no answer"): 2.0,
    # schema Jaccard 3/4, bigram Jaccard 6/11, executes, well-formed.
    ("sqltrail", "wrong answer"): 2 + 0.75 + 6 / 11 + 1 + 1,
}


def row(protocol: str, max_turns: int) -> dict:
    """A `quarry data rl` row (verl's schema, which SkyRL reads too)."""
    return {
        "data_source": "quarry/spider",
        "reward_model": {"style": "rule", "ground_truth": GOLD},
        "extra_info": {
            "index": 0,
            "db_id": "concert",
            "question": "Name the French singers, youngest first.",
            "protocol": protocol,
            "max_turns": max_turns,
        },
    }


def skyrl_adapter(protocol: str, max_turns: int, turns: list[str]) -> tuple[float, list[str]]:
    """The SkyRL adapter's reward for the turns, and the observations it answered with."""
    import skyrl_gym

    from quarry_trainer.skyrl import ENV_ID, register

    register()
    env = skyrl_gym.make(ENV_ID, env_config={"panel": protocol}, extras=row(protocol, max_turns))
    env.init([])
    observations = []
    for i, turn in enumerate(turns):
        out = env.step(turn)
        observations.append("\n".join(o["content"] for o in out["observations"]))
        if out["done"]:
            assert i == len(turns) - 1, f"the episode ended after turn {i + 1} of {len(turns)}"
            return out["reward"], observations
    env.close()
    raise AssertionError("the rollout ran out of turns before the episode ended")


def verl_response(turns: list[str], observations: list[str]) -> str:
    """The response as verl's reward manager decodes a multi-turn rollout (naive.py: skip_special_tokens=True): each
    observation in a chat-template turn whose role name is left on its own line."""
    parts = []
    for turn, obs in zip(turns, observations, strict=True):
        parts.append(turn)
        if obs:
            parts.append(f"\nuser\n{obs}\nassistant\n")
    return "".join(parts)


def verl_compute_score(repo_root, panel: str):
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    path = repo_root / "trainer" / "quarry_trainer" / "verl" / "reward.py"
    config = {"path": str(path), "name": "compute_score", "reward_kwargs": {"panel": panel}}
    fn = get_custom_reward_fn(OmegaConf.create({"reward": {"custom_reward_function": config}}))
    assert fn is not None
    return fn


CASES = [(p, r) for p in ROLLOUTS for r in ROLLOUTS[p]]


@pytest.mark.parametrize(("protocol", "rollout"), CASES, ids=[f"{p}-{r.replace(' ', '_')}" for p, r in CASES])
def test_every_engine_gives_a_rollout_the_same_total(env_url, reward_cli, repo_root, protocol, rollout):
    from quarry_trainer.env import EnvClient
    from quarry_trainer.replay import row_task, score_response
    from quarry_trainer.trl.rewards import panel_reward

    max_turns, turns = ROLLOUTS[protocol][rollout]
    r = row(protocol, max_turns)
    panel = protocol

    skyrl, observations = skyrl_adapter(protocol, max_turns, turns)

    response = verl_response(turns, observations)
    verl = verl_compute_score(repo_root, panel)(
        data_source=r["data_source"], solution_str=response, ground_truth=GOLD, extra_info=dict(r["extra_info"])
    )

    trl = panel_reward(panel)(
        completions=[[{"role": "assistant", "content": "".join(turns)}]],
        extra_info=[r["extra_info"]],
        reward_model=[r["reward_model"]],
    )

    _, record = score_response(EnvClient(), panel=panel, gold_sql=GOLD, response=response, **row_task(r["extra_info"]))
    assert len(record["turns"]) == len(turns)
    cli = reward_cli(panel, record)["total"]

    totals = {"skyrl": skyrl, "verl": verl["score"], "trl": trl[0], "cli": cli}
    assert totals == pytest.approx(dict.fromkeys(totals, EXPECTED[(protocol, rollout)]))


def verl_and_trl_and_cli(repo_root, reward_cli, protocol: str, max_turns: int, response: str):
    """The totals of verl's compute_score, TRL's panel_reward and the CLI on the replay's record, and the record."""
    from quarry_trainer.env import EnvClient
    from quarry_trainer.replay import row_task, score_response
    from quarry_trainer.trl.rewards import panel_reward

    r = row(protocol, max_turns)
    verl = verl_compute_score(repo_root, protocol)(
        data_source=r["data_source"], solution_str=response, ground_truth=GOLD, extra_info=dict(r["extra_info"])
    )
    trl = panel_reward(protocol)(completions=[response], extra_info=[r["extra_info"]], reward_model=[r["reward_model"]])
    _, record = score_response(
        EnvClient(), panel=protocol, gold_sql=GOLD, response=response, **row_task(r["extra_info"])
    )
    cli = reward_cli(protocol, record)["total"]
    return {"verl": verl["score"], "trl": trl[0], "cli": cli}, record


@pytest.mark.parametrize(
    ("protocol", "response", "total"),
    [("skyrl", "I don't know", -1.0), ("mtir", "blah", -0.1)],
    ids=["skyrl-i_dont_know", "mtir-blah"],
)
def test_the_issues_examples_fail_the_format_when_the_response_ends_before_the_episode(
    env_url, reward_cli, repo_root, protocol, response, total
):
    """Issue 30: with five turns to go, verl's compute_score scored `I don't know` 0 on the skyrl panel (the empty SQL
    of a bare prediction, counted well-formed) and gave MTIR's `blah` the +0.1 format reward."""
    totals, record = verl_and_trl_and_cli(repo_root, reward_cli, protocol, 5, response)
    assert totals == pytest.approx(dict.fromkeys(totals, total))
    assert record["end"] == "budget" and record["finalSql"] is None and len(record["turns"]) == 1


@pytest.mark.parametrize(
    ("protocol", "response", "total"),
    [
        ("skyrl", f"<think>By age.</think>\n<solution>{GOLD[:40]}", -1.0),
        ("mtir", f"<think>By age.</think>\n<answer>```sql\n{GOLD[:40]}", -0.1),
    ],
    ids=["skyrl", "mtir"],
)
def test_an_answer_cut_at_the_token_limit_is_a_format_error(env_url, reward_cli, repo_root, protocol, response, total):
    """The whole response is what the model wrote, so an answer block with no closing tag was cut at the token limit:
    the record keeps it cut (finish reason 'length'), where the service's step would close it as a stripped stop string.
    (The SkyRL adapter cannot tell the two apart: skyrl-gym's step gets the text alone, BaseTextEnv.step(action).)"""
    totals, record = verl_and_trl_and_cli(repo_root, reward_cli, protocol, 1, response)
    assert totals == pytest.approx(dict.fromkeys(totals, total))
    assert record["turns"][-1]["assistant"] == response
    # MTIR's </answer> is no stop string (generation ends at EOS), so nothing marks the cut but the format check.
    assert record["turns"][-1]["finishReason"] == ("length" if protocol == "skyrl" else "stop")


def test_panel_reward_reads_flat_columns_too(env_url):
    """A dataset with db_id, gold_sql, question and protocol columns (no extra_info) is scored the same way."""
    from quarry_trainer.trl.rewards import panel_reward

    turns = ROLLOUTS["skyrl"]["good"][1]
    got = panel_reward("skyrl")(
        completions=["".join(turns), "I don't know"],
        db_id=["concert", "concert"],
        gold_sql=[GOLD, GOLD],
        question=["Name the French singers.", "Name the French singers."],
        protocol=["skyrl", "skyrl"],
    )
    assert got == [1.0, -1.0]
