"""`quarry train`'s launches checked by the engines themselves: every recipe's verl overrides compose with verl's real
Hydra config and pass verl's own validate_config (and Quarry's reward function loads the way verl loads it); SkyRL's
compose with skyrl-train's ppo_base_config.yaml when its config is here (QUARRY_SKYRL_CONFIG: the wheel or its config
folder; skyrl-train needs Python 3.12, so it is rarely installed); unknown keys are each named; the mapping tables'
cited files declare the keys; the CLI runs the check end to end and writes a launch that bash parses.

The overrides come from the real CLI (`quarry train --dry-run --json`); no engine is started."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from quarry_trainer import preflight

RECIPES = ["mtir-sql", "mtsql-r1", "progress-sql", "skyrl-sql", "sql-trail"]
BASE = {
    "mtir-sql": "Qwen/Qwen3-4B",
    "mtsql-r1": "Qwen/Qwen3-4B",
    "progress-sql": "Qwen/Qwen2.5-Coder-7B-Instruct",
    "skyrl-sql": "Qwen/Qwen2.5-Coder-7B-Instruct",
    "sql-trail": "Qwen/Qwen2.5-Coder-7B-Instruct",
}
SKYRL_CONFIG = os.environ.get("QUARRY_SKYRL_CONFIG")


def skyrl_available() -> bool:
    found, _ = preflight.skyrl_config_dir(None)
    return found is not None


needs_skyrl = pytest.mark.skipif(
    not skyrl_available(),
    reason="SkyRL's config is not here: skyrl-train needs Python 3.12; set QUARRY_SKYRL_CONFIG to its wheel "
    "(python -m pip download --no-deps --python-version 3.12 --only-binary=:all: skyrl-train -d DIR) "
    "or to the skyrl_train/config folder inside it",
)


def dry_run(quarry_cli, repo_root, tmp_path, recipe, engine, *extra, python="no-python") -> tuple[int, dict]:
    """`quarry train --dry-run --json`: the launch as data. With python="no-python" the engine check fails fast."""
    args = [*quarry_cli, "train", "--recipe", recipe, "--engine", engine, "--model", BASE[recipe]]
    args += ["--data", str(tmp_path / "data"), "--out", str(tmp_path / "out"), "--dry-run", "--json"]
    args += ["--python", python if python != "no-python" else str(tmp_path / "no-python"), *extra]
    done = subprocess.run(args, cwd=repo_root, capture_output=True, text=True, timeout=600)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def intended(doc: dict) -> dict:
    """Each override's key and the value the launch means (those filled in by the launch script left out)."""
    return {o["key"]: o["value"] for o in doc["overrides"] if "${" not in json.dumps(o["value"])}


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_recipe_composes_with_verls_config_and_passes_its_validation(quarry_cli, repo_root, tmp_path, recipe):
    code, doc = dry_run(quarry_cli, repo_root, tmp_path, recipe, "verl")
    assert code == 1 and doc["preflight"]["engine"]["errors"][0]["kind"] == "python"  # the CLI could not check it
    quarry_errors = [f for f in doc["preflight"]["findings"] if f["level"] == "error" and f["check"] != "engine.python"]
    assert quarry_errors == []
    reply = preflight.run({"engine": "verl", "overrides": [o["arg"] for o in doc["overrides"]]})
    assert reply["unknown_keys"] == [] and reply["errors"] == [], reply
    assert reply["composed"] and reply["validated"] and reply["ok"]
    assert any("reward function loads" in c for c in reply["checks"])
    for key, value in intended(doc).items():
        assert reply["values"][key] == value, key
    # The paper's numbers are in verl's composed config.
    settings = doc["recipe"]["settings"]
    assert reply["values"]["actor_rollout_ref.rollout.n"] == settings["rl.group_size"]["value"]
    assert reply["values"]["actor_rollout_ref.actor.optim.lr"] == settings["rl.lr"]["value"]
    assert reply["values"]["data.train_batch_size"] == settings["rl.train_batch_size"]["value"]
    assert reply["values"]["actor_rollout_ref.rollout.temperature"] == settings["rl.temperature"]["value"]
    # Every launch is multi-turn: the recipe's turn budget, played by an agent loop verl's worker can instantiate.
    values = reply["values"]
    assert values["actor_rollout_ref.rollout.multi_turn.enable"] is True
    assert values["actor_rollout_ref.rollout.multi_turn.max_assistant_turns"] == settings["rl.max_turns"]["value"]
    loop = "tool_agent" if recipe == "mtir-sql" else "quarry_agent"
    assert values["actor_rollout_ref.rollout.agent.default_agent_loop"] == loop
    assert values["actor_rollout_ref.rollout.agent.agent_loop_config_path"].endswith("verl/agent_loop.yaml")
    assert any(c.startswith(f"agent loops registered: {loop}") for c in reply["checks"]), reply["checks"]
    assert not any(n["key"] == "rl.max_turns" for n in doc["notCarried"])


def test_a_launch_that_cannot_play_the_recipes_turns_fails(quarry_cli, repo_root, tmp_path):
    """Quarry's pre-flight refuses a verl launch whose overrides lost multi-turn; the engine check refuses an agent
    loop no worker could instantiate (the default, or a row's agent_name)."""
    code, doc = dry_run(
        quarry_cli,
        repo_root,
        tmp_path,
        "skyrl-sql",
        "verl",
        "--set",
        "verl.actor_rollout_ref.rollout.multi_turn.enable=false",
    )
    assert code == 1
    [lost] = [f for f in doc["preflight"]["findings"] if f["check"] == "verl.multi-turn"]
    assert lost["level"] == "error" and "multi_turn.enable is not true" in lost["message"]

    code, doc = dry_run(quarry_cli, repo_root, tmp_path, "skyrl-sql", "verl")
    args = [o["arg"] for o in doc["overrides"]]
    unknown = preflight.run(
        {"engine": "verl", "overrides": [*args, "actor_rollout_ref.rollout.agent.default_agent_loop=nope"]}
    )
    assert unknown["ok"] is False
    assert [e["kind"] for e in unknown["errors"]] == ["agent-loop"]
    assert "no agent loop named nope" in unknown["errors"][0]["message"]

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"prompt": ["a", "b"], "agent_name": ["quarry_agent", "multi_turn_sql"]}), rows)
    reply = preflight.run({"engine": "verl", "overrides": [*args, f"data.train_files={rows}"]})
    assert reply["ok"] is False and "no agent loop named multi_turn_sql" in reply["errors"][0]["message"]
    pq.write_table(pa.table({"prompt": ["a"], "agent_name": ["quarry_agent"]}), rows)
    assert preflight.run({"engine": "verl", "overrides": [*args, f"data.train_files={rows}"]})["ok"] is True


@needs_skyrl
@pytest.mark.parametrize("recipe", RECIPES)
def test_every_recipe_composes_with_skyrls_config(quarry_cli, repo_root, tmp_path, recipe):
    code, doc = dry_run(quarry_cli, repo_root, tmp_path, recipe, "skyrl")
    reply = preflight.run({"engine": "skyrl", "overrides": [o["arg"] for o in doc["overrides"]]})
    assert reply["unknown_keys"] == [] and reply["errors"] == [], reply
    assert reply["composed"] and reply["ok"]
    for key, value in intended(doc).items():
        assert reply["values"][key] == value, key
    settings = doc["recipe"]["settings"]
    assert reply["values"]["generator.n_samples_per_prompt"] == settings["rl.group_size"]["value"]
    assert reply["values"]["generator.max_turns"] == settings["rl.max_turns"]["value"]
    assert reply["values"]["environment.env_class"] == "quarry-text2sql"


def test_unknown_keys_are_each_named_and_the_rest_compose():
    reply = preflight.run(
        {
            "engine": "verl",
            "overrides": ["actor_rollout_ref.rollout.n=4", "actor_rollout_ref.rollout.nn=4", "trainer.no.such=1"],
        }
    )
    assert reply["unknown_keys"] == ["actor_rollout_ref.rollout.nn", "trainer.no.such"]
    assert reply["values"] == {"actor_rollout_ref.rollout.n": 4}
    assert reply["composed"] is False and reply["ok"] is False


def test_skyrl_without_its_config_says_how_to_get_it(monkeypatch):
    if skyrl_available() and not SKYRL_CONFIG:
        pytest.skip("skyrl_train is installed here")
    monkeypatch.delenv("QUARRY_SKYRL_CONFIG", raising=False)
    reply = preflight.run({"engine": "skyrl", "overrides": ["trainer.epochs=1"]})
    assert reply["ok"] is False
    [error] = reply["errors"]
    assert error["kind"] == "engine-config-missing"
    assert "pip download --no-deps --python-version 3.12 --only-binary=:all: skyrl-train" in error["message"]


def test_a_wheel_is_read_for_its_config_folder(tmp_path):
    """A wheel-shaped zip made here (no SkyRL file is copied): its skyrl_train/config is extracted and composed."""
    if skyrl_available() and not SKYRL_CONFIG:
        pytest.skip("skyrl_train is installed here: its own config is used")
    wheel = tmp_path / "skyrl_train-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("skyrl_train/config/ppo_base_config.yaml", "defaults:\n  - _self_\ntrainer:\n  epochs: 1\n")
        z.writestr("skyrl_train/__init__.py", "")
    reply = preflight.run({"engine": "skyrl", "skyrl_config": str(wheel), "overrides": ["trainer.epochs=3", "x.y=1"]})
    assert reply["engine_version"] == "0.0.1"
    assert reply["unknown_keys"] == ["x.y"]
    assert reply["values"] == {"trainer.epochs": 3}


def test_the_mapping_tables_cite_files_that_declare_the_keys(quarry_cli, repo_root):
    tables = {}
    for engine in ("verl", "skyrl"):
        done = subprocess.run([*quarry_cli, "train", "--mapping", engine, "--json"], capture_output=True, text=True)
        tables[engine] = json.loads(done.stdout)
    verl_root = preflight.verl_config_dir().parent.parent.parent  # site-packages
    for row in tables["verl"]:
        first, *rest = [f.strip() for f in row["file"].split(",")]
        files = [verl_root / first] + [verl_root / "verl/trainer/config" / f for f in rest]
        texts = "\n".join(f.read_text() for f in files)
        for key in row["engine"]:
            if key in row["add"]:
                continue
            leaf = key.rsplit(".", 1)[-1]
            assert f"{leaf}:" in texts, (key, row["file"])
    found, _ = preflight.skyrl_config_dir(None)
    if found is None:
        return
    for row in tables["skyrl"]:
        text = (found.parent.parent / row["file"]).read_text()
        for key in row["engine"]:
            if key not in row["add"]:
                assert f"{key.rsplit('.', 1)[-1]}:" in text, (key, row["file"])


def test_verls_own_validation_is_reported(quarry_cli, repo_root, tmp_path):
    """A launch Quarry's arithmetic does not question but verl refuses at start: both micro-batch spellings."""
    code, doc = dry_run(
        quarry_cli,
        repo_root,
        tmp_path,
        "sql-trail",
        "verl",
        "--set",
        "verl.actor_rollout_ref.rollout.log_prob_micro_batch_size=8",
        "--set",
        "verl.actor_rollout_ref.rollout.nn=1",
        python=sys.executable,
    )
    assert code == 1
    findings = {f["check"]: f["message"] for f in doc["preflight"]["findings"]}
    assert findings["engine.unknown-key"].startswith("verl has no key 'actor_rollout_ref.rollout.nn' (from --set)")
    reply = preflight.run(
        {"engine": "verl", "overrides": [o["arg"] for o in doc["overrides"] if not o["key"].endswith(".nn")]}
    )
    assert reply["validated"] is False
    assert "You have set both 'actor_rollout_ref.rollout.log_prob_micro_batch_size'" in reply["errors"][0]["message"]


def test_the_cli_checks_with_the_engine_and_writes_a_launch(quarry_cli, repo_root, tmp_path):
    """End to end: data made by `quarry data rl`, the engine check run by the CLI itself, launch.sh/json written."""
    db = tmp_path / "database" / "pets"
    db.mkdir(parents=True)
    con = sqlite3.connect(db / "pets.sqlite")
    con.executescript(
        "CREATE TABLE pet (id INTEGER PRIMARY KEY, kind TEXT); INSERT INTO pet VALUES (1, 'dog'), (2, 'cat')"
    )
    con.close()
    questions = [
        {"db_id": "pets", "question": q, "query": s}
        for q, s in [
            ("How many pets?", "SELECT count(*) FROM pet"),
            ("Which kinds?", "SELECT kind FROM pet"),
            ("The first pet's kind?", "SELECT kind FROM pet WHERE id = 1"),
        ]
    ]
    (tmp_path / "train.json").write_text(json.dumps(questions))
    data = tmp_path / "data"
    made = subprocess.run(
        [*quarry_cli, "data", "rl", "--dataset", "spider:train.json", "--db-dir", "database", "--protocol", "mtir"]
        # verl's tool loop declares the tool itself: the rows leave it out of the prompt (issue 30 item 5).
        + ["--tools-in-template", "--out", str(data)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    out = tmp_path / "run"
    # Three rows: a batch of 2 on 2 GPUs (2 × 5 rollouts = 10 sequences, 5 per GPU, one at a time).
    small = ["rl.train_batch_size=2", "rl.mini_batch_size=2", "hardware.gpus_per_node=2"]
    small += ["rl.micro_batch_size_per_gpu=1"]
    args = [*quarry_cli, "train", "--recipe", "mtir-sql", "--engine", "verl", "--model", BASE["mtir-sql"]]
    args += ["--data", str(data), "--out", str(out), "--python", sys.executable]
    for s in small:
        args += ["--set", s]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok: verl/utils/config.py validate_config" in done.stdout
    assert "ok: tool config loads: sql-execute_sql_query" in done.stdout
    assert "ok: agent loops registered: tool_agent" in done.stdout
    launch = json.loads((out / "launch.json").read_text())
    assert launch["preflight"]["ok"] is True and launch["data"]["rows"] == 3
    assert launch["data"]["databases"] == str(tmp_path / "database")
    by_key = {o["key"]: o for o in launch["overrides"]}
    assert by_key["data.train_batch_size"] == {
        "key": "data.train_batch_size",
        "value": 2,
        "from": "rl.train_batch_size",
        "arg": "data.train_batch_size=2",
    }
    assert launch["recipe"]["settings"]["rl.train_batch_size"]["set"] == "--set on the command line"
    subprocess.run(["bash", "-n", str(out / "launch.sh")], check=True)
    job = json.loads((out / "job.json").read_text())
    assert job["command"] == ["bash", str(out / "launch.sh")] and job["target"] == "local"
    # A second run replaces its own launch; an unrelated non-empty folder is refused.
    assert subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    args[args.index(str(out))] = str(other)
    refused = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "holds no earlier launch" in refused.stderr
    assert Path(other / "notes.txt").read_text() == "mine"
