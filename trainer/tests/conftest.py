"""Shared fixtures for quarry-trainer's tests: the repository root and the built `quarry` CLI (built on demand)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# Ray 2.60's local ray.init() turns token authentication on and writes ~/.ray/auth_token unless RAY_AUTH_MODE is set
# (ray/_private/worker.py ensure_token_if_auth_enabled); that file then turns it on for every later `ray start` on the
# machine. The tests' Ray clusters are on loopback: authentication off, nothing written to the user's home.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def _node() -> str:
    """The Node the project pins (node_modules/.bin/node, Node 24), which better-sqlite3 13 needs."""
    pinned = REPO_ROOT / "node_modules" / ".bin" / "node"
    if not pinned.exists():
        pytest.fail("node_modules is missing: run `npm ci` at the repository root first")
    return str(pinned)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def quarry_cli() -> list[str]:
    """The command that runs `quarry` from this checkout, building dist/ first when it is not there."""
    node = _node()
    cli = REPO_ROOT / "dist" / "cli.js"
    if not cli.exists():
        subprocess.run([node, "scripts/build.mjs"], cwd=REPO_ROOT, check=True)
    return [node, str(cli)]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reaches a model hub: transformers and datasets read local files only."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


@pytest.fixture(scope="session")
def sql_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Spider-layout folder with one small database: ROOT/concert/concert.sqlite."""
    import sqlite3

    root = tmp_path_factory.mktemp("dbs")
    (root / "concert").mkdir()
    con = sqlite3.connect(root / "concert" / "concert.sqlite")
    con.executescript(
        """
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
        INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 52), (2, 'Timbaland', 'United States', 32),
          (3, 'Justin Brown', 'France', 29), (4, 'Rose White', 'France', 41);
        """
    )
    con.commit()
    con.close()
    return root


@pytest.fixture(scope="session")
def env_url(quarry_cli: list[str], sql_root: Path):
    """A real `quarry serve-env` over sql_root for the session; QUARRY_ENV_URL points at it."""
    from quarry_trainer.env import serve_env

    with serve_env([sql_root], command=quarry_cli) as url:
        previous = os.environ.get("QUARRY_ENV_URL")
        os.environ["QUARRY_ENV_URL"] = url
        try:
            yield url
        finally:
            if previous is None:
                os.environ.pop("QUARRY_ENV_URL", None)
            else:
                os.environ["QUARRY_ENV_URL"] = previous


@pytest.fixture
def make_rl_data(quarry_cli: list[str], sql_root: Path, tmp_path: Path):
    """Makes `quarry data rl` rows (skyrl protocol) over sql_root from Spider-style questions; returns the folder."""
    import json

    def make(questions: list[dict[str, str]], max_turns: int, name: str = "rl") -> Path:
        src = tmp_path / f"{name}.json"
        src.write_text(json.dumps(questions))
        out = tmp_path / name
        made = subprocess.run(
            [*quarry_cli, "data", "rl", "--dataset", f"spider:{src}", "--db-dir", str(sql_root)]
            + ["--protocol", "skyrl", "--max-turns", str(max_turns), "--out", str(out)],
            capture_output=True,
            text=True,
        )
        assert made.returncode == 0, made.stderr
        return out

    return make


@pytest.fixture
def concert_rl_data(make_rl_data) -> Path:
    """Two concert questions with two turns each: the folder `quarry train --data` takes."""
    return make_rl_data(
        [
            {"db_id": "concert", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"},
            {"db_id": "concert", "question": "Name the singers.", "query": "SELECT name FROM singer"},
        ],
        max_turns=2,
    )


@pytest.fixture
def reward_cli(quarry_cli: list[str], sql_root: Path, tmp_path: Path):
    """`quarry reward --trajectory RECORD --json` as a function of (panel, record), returning what it prints. It runs
    from sql_root: the service names a database relative to its --db-dir (its answers carry no server path), so a
    record it made has a task.db.path that resolves there."""

    def run(panel: str, record: dict) -> dict:
        path = tmp_path / "rollout.jsonl"
        path.write_text(json.dumps(record) + "\n")
        out = subprocess.run(
            [*quarry_cli, "reward", "--panel", panel, "--trajectory", str(path), "--json"],
            capture_output=True,
            text=True,
            cwd=sql_root,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run
