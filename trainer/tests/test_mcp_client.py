"""`quarry mcp` driven by the official Python MCP client (PyPI `mcp`, pinned in the dev extra) over stdio, as a Python
agent would start it: initialize, list the tools, call each one, and the sandbox's refusals seen from Python — writes
by every route, ATTACH, PRAGMA, load_extension refused; a runaway statement killed at the time limit; a huge result
capped; a malformed argument answered as a tool error; ask_quarry's episode saved as `quarry ask` saves it. The
server is the built CLI (dist/cli.js, built on demand by conftest's quarry_cli); ask_quarry's model is the project's
replay server (scripts/replay-server.mjs) on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the `mcp` client is not installed: `npm run setup:python` (dev extra)")
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

LIMITS = ["--timeout-ms", "1000", "--max-rows", "100", "--max-chars", "2000"]


@pytest.fixture(scope="module")
def cli(quarry_cli: list[str]) -> list[str]:
    """The built CLI, skipped with a reason when that build predates `quarry mcp`."""
    probe = subprocess.run([*quarry_cli, "mcp", "--help"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("dist/cli.js has no `quarry mcp` (built before it): run `npm run build`")
    return quarry_cli


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A served folder with one database, a database outside it, and a link in the folder pointing out."""
    root = tmp_path_factory.mktemp("served")
    outside = tmp_path_factory.mktemp("outside")
    for path in (root / "singers.sqlite", outside / "outside.sqlite"):
        con = sqlite3.connect(path)
        con.executescript(
            """
            CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT, age INTEGER);
            CREATE TABLE song (song_id INTEGER PRIMARY KEY, title TEXT,
                               singer_id INTEGER REFERENCES singer(singer_id));
            INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 52), (2, 'Timbaland', 'United States', 32),
              (3, 'Justin Brown', 'France', 29), (4, 'Rose White', 'France', 41);
            INSERT INTO song VALUES (1, 'Sun', 1), (2, 'Gentleman', 2), (3, 'Hey Oh', 3);
            """
        )
        con.commit()
        con.close()
    (root / "escape.sqlite").symlink_to(outside / "outside.sqlite")
    return {"root": root, "db": root / "singers.sqlite", "outside": outside, "trajectory": root / "asked.jsonl"}


@pytest.fixture(scope="module")
def replay_model(cli: list[str], repo_root: Path, tmp_path_factory: pytest.TempPathFactory):
    """An OpenAI-compatible replay server answering one question in two turns; yields its model spec."""
    script = tmp_path_factory.mktemp("replay") / "script.json"
    script.write_text(
        json.dumps(
            [
                {"turn": 0, "response": "<think>Count.</think>\n<sql>SELECT count(*) FROM singer</sql>"},
                {"turn": 1, "response": "<solution>SELECT name FROM singer WHERE country = 'France'</solution>"},
            ]
        )
    )
    server = subprocess.Popen(
        [cli[0], str(repo_root / "scripts" / "replay-server.mjs"), "--script", str(script), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline().split()
        assert line[0] == "listening", line
        yield f"openai:{line[1]}#replay"
    finally:
        server.terminate()
        server.wait(timeout=30)


def session(cli: list[str], args: list[str], body: Callable[[Any], Awaitable[None]]) -> None:
    """Starts `quarry mcp ARGS…` over stdio with the official client, initializes, and runs `body(session)`."""

    async def run() -> None:
        params = StdioServerParameters(command=cli[0], args=[cli[1], "mcp", *args])
        async with stdio_client(params) as (read, write), mcp.ClientSession(read, write) as s:
            await s.initialize()
            await body(s)

    anyio.run(run)


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def served_args(served: dict[str, Path]) -> list[str]:
    return ["--db-dir", str(served["root"]), *LIMITS]


def test_initialize_and_list_tools(cli, served):
    async def body(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert sorted(tools) == [
            "ask_quarry",
            "describe_schema",
            "explain_query",
            "list_databases",
            "run_sql",
            "sample_rows",
        ]
        run_sql = tools["run_sql"]
        assert run_sql.annotations.read_only_hint is True
        assert run_sql.input_schema["required"] == ["database", "sql"]
        assert run_sql.input_schema["properties"]["max_rows"]["maximum"] == 100
        assert run_sql.input_schema["additionalProperties"] is False

    session(cli, served_args(served), body)


def test_each_tool_answers(cli, served, replay_model):
    async def body(s):
        listed = await s.call_tool("list_databases", {})
        assert not listed.is_error, text(listed)
        assert [d["id"] for d in listed.structured_content["databases"]] == ["singers"]

        for style, expected in (
            ("list", "Table: singer\n- singer_id (INTEGER, PRIMARY KEY)"),
            ("ddl", "create table singer ("),
            ("names", "singer\nsong"),
        ):
            schema = await s.call_tool("describe_schema", {"database": "singers", "style": style})
            assert not schema.is_error, text(schema)
            assert expected in text(schema), (style, text(schema))

        sample = await s.call_tool("sample_rows", {"database": "singers", "table": "singer", "rows": 2})
        assert not sample.is_error, text(sample)
        assert sample.structured_content["rowCount"] == 2
        assert "Joe Sharp" in text(sample)

        rows = await s.call_tool(
            "run_sql",
            {
                "database": "singers",
                "sql": "SELECT name FROM singer WHERE country = 'France' ORDER BY name",
                "format": "json",
            },
        )
        assert not rows.is_error, text(rows)
        assert json.loads(text(rows)) == {
            "columns": ["name"],
            "data": [{"name": "Justin Brown"}, {"name": "Rose White"}],
        }

        plan = await s.call_tool(
            "explain_query",
            {"database": "singers", "sql": "SELECT * FROM song JOIN singer USING (singer_id) ORDER BY title"},
        )
        assert not plan.is_error, text(plan)
        assert text(plan).startswith("QUERY PLAN\n")
        assert "USE TEMP B-TREE FOR ORDER BY" in text(plan)

        asked = await s.call_tool("ask_quarry", {"database": "singers", "question": "Which singers are from France?"})
        assert not asked.is_error, text(asked)
        assert "SELECT name FROM singer WHERE country = 'France'" in text(asked)
        assert "Rose White" in text(asked)

    session(cli, [*served_args(served), "--model", replay_model, "--trajectory", str(served["trajectory"])], body)
    records = [json.loads(line) for line in served["trajectory"].read_text().splitlines()]
    assert records[-1]["finalSql"] == "SELECT name FROM singer WHERE country = 'France'"
    assert records[-1]["meta"]["source"] == "mcp"


ATTACKS = [
    "INSERT INTO singer (name) VALUES ('x')",
    "UPDATE singer SET age = 0",
    "DELETE FROM singer",
    "WITH x AS (SELECT 1) INSERT INTO singer (name) SELECT 'x' FROM x",
    "WITH x AS (SELECT 1) DELETE FROM singer",
    "DROP TABLE song",
    "CREATE TEMP TABLE t (a)",
    "SELECT 1; DELETE FROM singer",
    "ATTACH ':memory:' AS m",
    "DETACH main",
    "VACUUM",
    "PRAGMA query_only = 0",
    "PRAGMA user_version = 7",
    "SELECT load_extension('/tmp/nothing.so')",
    "BEGIN IMMEDIATE",
]


def test_writes_are_refused_and_nothing_changes(cli, served, tmp_path):
    before = hashlib.sha256(served["db"].read_bytes()).hexdigest()
    listing = sorted(p.name for p in served["root"].iterdir())
    attacks = [*ATTACKS, f"VACUUM INTO '{tmp_path / 'copy.sqlite'}'", f"ATTACH '{tmp_path / 'new.sqlite'}' AS a"]

    async def body(s):
        for sql in attacks:
            result = await s.call_tool("run_sql", {"database": "singers", "sql": sql})
            assert result.is_error, f"{sql} was not refused: {text(result)}"
            assert text(result).startswith("rejected: "), (sql, text(result))
        for database in ("escape.sqlite", str(served["db"]), "../outside/outside.sqlite"):
            result = await s.call_tool("run_sql", {"database": database, "sql": "SELECT 1"})
            assert result.is_error, f"{database} was served: {text(result)}"
            assert str(served["root"]) not in text(result)

    session(cli, served_args(served), body)
    assert hashlib.sha256(served["db"].read_bytes()).hexdigest() == before
    assert sorted(p.name for p in served["root"].iterdir()) == listing
    assert list(tmp_path.iterdir()) == []


def test_runaway_killed_huge_capped_malformed_refused(cli, served):
    async def body(s):
        runaway = await s.call_tool(
            "run_sql",
            {
                "database": "singers",
                "sql": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r",
            },
        )
        assert runaway.is_error
        assert text(runaway).startswith("timeout: "), text(runaway)

        huge = await s.call_tool(
            "run_sql",
            {
                "database": "singers",
                "sql": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 50000) "
                "SELECT i, printf('%.300c', 'x') AS pad FROM r",
            },
        )
        assert not huge.is_error, text(huge)
        assert len(text(huge)) <= 2000
        assert text(huge).endswith("of 50000 rows; truncated to 2000 characters)")
        assert huge.structured_content["rowCount"] == 50000

        for args in (
            {"database": "singers", "sql": 42},
            {"sql": "SELECT 1"},
            {"database": "singers", "sql": "SELECT 1", "max_rows": 5000},
            {"database": "singers", "sql": "SELECT 1", "shell": "rm -rf /"},
        ):
            bad = await s.call_tool("run_sql", args)
            assert bad.is_error, args
            assert "validation" in text(bad).lower(), text(bad)

        still = await s.call_tool("run_sql", {"database": "singers", "sql": "SELECT count(*) AS n FROM singer"})
        assert not still.is_error
        assert text(still) == "   n\n0  4"

    session(cli, served_args(served), body)
