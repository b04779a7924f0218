// The MCP server object of `quarry mcp`, on the official MCP TypeScript SDK: Quarry's tools (tools.ts) registered with
// their schemas and read-only annotations. One is made per stdio session, and one per HTTP request in the stateless
// HTTP transport (http.ts); all of them share the context's SQL pool, databases and model.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { quarryTools, runTool, type McpToolContext } from './tools';

const MCP_SERVER_NAME = 'quarry';

const INSTRUCTIONS =
  "Quarry serves SQLite databases read-only through its sandbox. Start with list_databases, read a database's " +
  'schema with describe_schema (and sample_rows for its values), then query with run_sql; explain_query shows how ' +
  "SQLite would run a statement, and ask_quarry hands a whole question to Quarry's own text-to-SQL agent.";

export function createMcpServer(ctx: McpToolContext, version: string): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version }, { instructions: INSTRUCTIONS });
  for (const tool of quarryTools(ctx)) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: {
          title: tool.title,
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: tool.name !== 'ask_quarry',
          openWorldHint: tool.name === 'ask_quarry',
        },
      },
      (args: Record<string, unknown>, extra) => runTool(tool, args, extra.signal, ctx.databases.root),
    );
  }
  return server;
}
