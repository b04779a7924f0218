"""Quarry's verl SQL tool, built by verl's own tool loader from tool_config.yaml (verl/tools/tool_registry.py) and
called the way verl's tool agent loop calls a BaseTool (create with the row's create_kwargs, execute, release) against
a real `quarry serve-env`."""

from __future__ import annotations

import asyncio
import json


def test_verl_builds_the_tool_from_the_yaml_and_runs_it(env_url, repo_root):
    from verl.tools.tool_registry import initialize_tools_from_config

    [tool] = initialize_tools_from_config(str(repo_root / "trainer/quarry_trainer/verl/tool_config.yaml"))
    schema = tool.get_openai_tool_schema()
    assert schema.function.name == "sql-execute_sql_query"
    assert schema.function.parameters.required == ["db_name", "sql"]

    async def call(args, create_kwargs=None):
        instance, _ = await tool.create(create_kwargs=create_kwargs or {})
        try:
            return await tool.execute(instance, args)
        finally:
            await tool.release(instance)

    response, reward, info = asyncio.run(
        call({"db_name": "concert", "sql": "SELECT name FROM singer ORDER BY age LIMIT 2"})
    )
    assert reward == 0.0 and info == {"ok": True, "rows": 2}
    parsed = json.loads(response.text)
    assert parsed["columns"] == ["name"]
    assert [list(r.values())[0] if isinstance(r, dict) else r[0] for r in parsed["data"]] == [
        "Justin Brown",
        "Timbaland",
    ]

    # The row fixes the database (tools_kwargs → create_kwargs): the model's db_name is not used.
    fixed, _, _ = asyncio.run(
        call({"db_name": "elsewhere", "sql": "SELECT count(*) AS n FROM singer"}, {"db": "concert"})
    )
    assert "4" in fixed.text
    # Errors are observations, not exceptions: a bad column, an unknown database, an empty call.
    bad, _, _ = asyncio.run(call({"db_name": "concert", "sql": "SELECT nme FROM singer"}))
    assert "no such column" in bad.text
    missing, _, info = asyncio.run(call({"db_name": "nope", "sql": "SELECT 1"}))
    assert missing.text.startswith("Error: not-found") and info == {"error": "not-found"}
    empty, _, _ = asyncio.run(call({"db_name": "concert"}))
    assert "sql" in empty.text
