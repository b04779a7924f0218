"""verl multi-turn tool: MTIR-SQL's `sql-execute_sql_query` (App. C.1), run in Quarry's sandbox by `quarry serve-env`.

verl's tool agent loop (verl/experimental/agent_loop/tool_agent_loop.py, registered as "tool_agent") builds the tools
declared in `actor_rollout_ref.rollout.multi_turn.tool_config_path` (verl/tools/tool_registry.py
`initialize_tools_from_config`: `class_name`, `config.type: native`, `tool_schema`), and for each tool call runs
`create(create_kwargs=tools_kwargs[name]["create_kwargs"])`, `execute(instance_id, arguments)`, `release`. The database
is the call's `db_name` argument (MTIR-SQL's signature), unless the row's `extra_info.tools_kwargs` fixes it with
`{"sql-execute_sql_query": {"create_kwargs": {"db": "<db_id>"}}}`; only databases under the service's --db-dir roots
are reachable. The observation is the sandbox's JSON rendering (columns and at most `max_rows` records, App. C.1),
which the loop wraps in the chat template's tool-response turn. verl is imported lazily by the loader, not here.
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import uuid4

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from quarry_trainer.env import EnvClient, EnvServiceError


class QuarrySqlTool(BaseTool):
    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema):
        super().__init__(config, tool_schema)
        self.max_rows = int(config.get("max_rows", 10))
        self.timeout_ms = int(config.get("timeout_ms", 30_000))
        self.client = EnvClient(config.get("url"), config.get("token"))
        self.instances: dict[str, dict[str, Any]] = {}

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        instance_id = instance_id or str(uuid4())
        create_kwargs = kwargs.get("create_kwargs") or {}
        self.instances[instance_id] = {"db": create_kwargs.get("db")}
        return instance_id, ToolResponse()

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[ToolResponse, float, dict]:
        db = (self.instances.get(instance_id) or {}).get("db") or parameters.get("db_name")
        sql = parameters.get("sql")
        if not isinstance(sql, str) or not sql.strip():
            return ToolResponse(text='Error: the call needs a non-empty "sql" argument.'), 0.0, {}
        if not db:
            return ToolResponse(text='Error: the call needs a "db_name" argument.'), 0.0, {}
        request = {"db": db, "sql": sql, "format": "json", "maxRows": self.max_rows, "timeoutMs": self.timeout_ms}
        try:
            record = await asyncio.get_running_loop().run_in_executor(None, self.client.execute, request)
        except EnvServiceError as err:
            return ToolResponse(text=f"Error: {err}"), 0.0, {"error": err.kind}
        return ToolResponse(text=record["observation"]), 0.0, {"ok": record["ok"], "rows": record["rowCount"]}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self.instances.pop(instance_id, None)
