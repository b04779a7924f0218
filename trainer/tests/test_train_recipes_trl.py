"""Every paper's recipe trains with `quarry train --engine trl`, scaled to the tiny model with `--set`: the real CLI
writes the launch, runs the pre-flight (TRL's GRPOConfig constructs), starts `quarry serve-env`, and TRL's
GRPOTrainer runs two steps of the recipe's protocol and panel on the CPU, writing metrics.jsonl, run.json, a
checkpoint and the final policy."""

from __future__ import annotations

import json
import subprocess

import pytest

RECIPES = {
    "skyrl-sql": "skyrl",
    "sql-trail": "sqltrail",
    "mtir-sql": "mtir",
    "mtsql-r1": "mtsqlr1",
    "progress-sql": "progress",
}
TINY = [
    "rl.group_size=2",
    "rl.train_batch_size=1",
    "rl.mini_batch_size=1",
    "rl.micro_batch_size_per_gpu=2",
    "rl.total_steps=2",
    "rl.max_turns=2",
    "rl.max_turn_tokens=12",
    "rl.max_prompt_length=3000",
    "rl.max_response_length=512",
    "rl.save_freq=1",
    "trl.use_cpu=true",
    "trl.seed=0",
]


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_each_recipe_runs_two_steps_with_trl_on_the_tiny_model(recipe, quarry_cli, sql_root, repo_root, tmp_path):
    question = {"db_id": "concert", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"}
    questions = [question]
    src = tmp_path / "train.json"
    src.write_text(json.dumps(questions))
    data = tmp_path / "rl"
    made = subprocess.run(
        [*quarry_cli, "data", "rl", "--dataset", f"spider:{src}", "--db-dir", str(sql_root)]
        + ["--protocol", RECIPES[recipe], "--max-turns", "2", "--out", str(data)],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    out = tmp_path / "run"
    sets = [arg for s in TINY for arg in ("--set", s)]
    run = subprocess.run(
        [*quarry_cli, "train", "--recipe", recipe, "--engine", "trl"]
        + ["--model", str(repo_root / "media/models/tiny-sql")]
        + ["--data", str(data), "--out", str(out), "--python", str(repo_root / ".venv/bin/python"), *sets],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    launch = json.loads((out / "launch.json").read_text())
    assert launch["engine"] == "trl" and launch["preflight"]["ok"], launch["preflight"]
    args = {o["key"]: o["value"] for o in launch["overrides"]}
    assert args["num_generations"] == 2 and args["quarry.max_turns"] == 2
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if "reward" in r]
    assert [r["step"] for r in steps] == [1, 2] and all("turns" in r and "pass_at_group" in r for r in steps)
    assert (out / "checkpoint-2").is_dir() and (out / "final" / "config.json").exists()
    assert json.loads((out / "run.json").read_text())["kind"] == "grpo"
