// The tools `quarry mcp` offers an agent, each a thin use of what Quarry already does: the database listing
// (databases.ts), the schema in a protocol's prompt style (core/db/schema), sample rows and read-only statements in the
// sandbox (core/db pool: engine-enforced read-only, killable, row/cell caps) rendered as the agent protocols'
// observations, a query plan (core/db/queryPlan), and a question put to Quarry's own agent (app/ask.ts, the trajectory
// saved as `quarry ask` saves it). Descriptions are written for the model that reads them; every argument has a schema
// with its bounds, and every failure is a tool error (isError) whose text never names the server's folders.
import { relative, sep } from 'node:path';
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SqlPool } from '../../core/db/pool';
import type { ExecResult } from '../../core/db/types';
import { OBSERVATION_FORMATS, renderObservation } from '../../core/db/observation';
import { renderSchema, SCHEMA_STYLES, quoteIdent } from '../../core/db/schema';
import { introspectViaPool } from '../../core/db/schema/viaPool';
import { explainQueryPlan, renderPlanText } from '../../core/db/queryPlan';
import { ASK_PROTOCOL_NAMES } from '../../core/agent/protocols';
import { EpisodeSetupError } from '../../core/agent/loop';
import type { ProtocolName } from '../../core/agent/types';
import type { ChatModel, SamplingOptions } from '../../core/models/types';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import { ask } from '../ask';
import { ServiceError } from '../envService/errors';
import type { ServedDatabases } from './databases';
import { defaultRows, type McpLimits } from './limits';

/** Quarry's own agent as `quarry mcp --model` configured it. */
export interface McpAgent {
  model: ChatModel;
  /** The spec it was made from, for messages. */
  spec: string;
  protocol: ProtocolName;
  maxTurns?: number;
  sampling?: SamplingOptions;
  modelTimeoutMs?: number;
  /** The trajectory file episodes are appended to; null when saving is off. */
  saveTo: string | null;
}

export interface McpToolContext {
  databases: ServedDatabases;
  pool: SqlPool;
  limits: McpLimits;
  /** Null when the server was started without --model: ask_quarry then answers with an error saying so. */
  agent: McpAgent | null;
  /** The folder relative paths in answers are given from (the workspace). */
  cwd: string;
}

interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: z.ZodObject;
  handler: (args: Record<string, unknown>, signal: AbortSignal) => Promise<CallToolResult>;
}

/** Thrown by a handler for a failure the caller caused or can act on; its message is the tool error's text. */
class ToolFailure extends Error {}

const databaseArg = () =>
  z
    .string()
    .min(1)
    .max(1000)
    .describe(
      'The database id exactly as list_databases returns it (e.g. "bookshop.sqlite" or "concert_singer"); ' +
        'never a filesystem path.',
    );

const formatArg = z
  .enum(OBSERVATION_FORMATS as [string, ...string[]])
  .optional()
  .describe(
    'How the result is rendered: "df" (pandas DataFrame text, the default), "table" (an ASCII grid), ' +
      '"json" ({"columns", "data"} with at most 10 records) or "text" (a Python list of tuples, 200 characters).',
  );

export function quarryTools(ctx: McpToolContext): ToolDefinition[] {
  const { limits } = ctx;
  const sqlArg = (what: string) => z.string().min(1).max(limits.maxSqlChars).describe(what);
  return [
    {
      name: 'list_databases',
      title: 'List databases',
      description:
        'Lists the SQLite databases this server can query, by id, with their size in bytes. Call it first: every ' +
        'other tool names a database by one of these ids. Databases are opened read-only; nothing can change them.',
      inputSchema: z.object({}).strict(),
      handler: async () => {
        const { databases, incomplete } = ctx.databases.list();
        const lines = databases.map((d) => `- ${d.id} (${d.bytes} bytes)`);
        const head =
          databases.length === 0
            ? 'No SQLite databases (*.sqlite, *.sqlite3, *.db) in the served folder.'
            : `${databases.length} database${databases.length === 1 ? '' : 's'} (name one by its id):`;
        const tail = incomplete ? ['(the listing stopped at its bound; some databases may be missing)'] : [];
        return {
          content: [{ type: 'text', text: [head, ...lines, ...tail].join('\n') }],
          structuredContent: { databases, incomplete },
        };
      },
    },
    {
      name: 'describe_schema',
      title: 'Describe a database schema',
      description:
        "Shows a database's tables, views, columns, primary and foreign keys as a text-to-SQL prompt would. " +
        'Styles: "list" (Table: t / - col (TYPE, PRIMARY KEY), then foreign keys; SkyRL-SQL and SQL-Trail), ' +
        '"ddl" (create table statements with example rows; MTSQL-R1, OmniSQL) or "names" (table names only). ' +
        `Long schemas are shortened to ${limits.maxSchemaChars} characters at most.`,
      inputSchema: z
        .object({
          database: databaseArg(),
          style: z
            .enum(SCHEMA_STYLES as [string, ...string[]])
            .optional()
            .describe('The prompt style: "list" (default), "ddl" or "names".'),
          sample_rows: z
            .number()
            .int()
            .min(0)
            .max(limits.maxSampleRows)
            .optional()
            .describe('Example rows per table (default 0 for list and names, 3 for ddl).'),
          max_chars: z
            .number()
            .int()
            .min(200)
            .max(limits.maxSchemaChars)
            .optional()
            .describe(`Shorten the schema to at most this many characters (default ${limits.maxSchemaChars}).`),
        })
        .strict(),
      handler: async (a) => {
        const path = ctx.databases.resolve(a.database as string);
        const style = (a.style as 'list' | 'ddl' | 'names' | undefined) ?? 'list';
        const sampleRows = a.sample_rows as number | undefined;
        const info = await introspectViaPool(ctx.pool, path, {
          sampleRows: Math.min(sampleRows ?? 3, limits.maxSampleRows),
          timeoutMs: limits.timeoutMs,
          countTimeoutMs: Math.min(3000, limits.timeoutMs),
        });
        const text = renderSchema(info, {
          style,
          sampleRows: style === 'ddl' ? Math.min(sampleRows ?? 3, limits.maxSampleRows) : sampleRows,
          maxChars: (a.max_chars as number | undefined) ?? limits.maxSchemaChars,
        });
        return textResult(text || '(the database has no tables or views)');
      },
    },
    {
      name: 'sample_rows',
      title: 'Sample rows of a table',
      description:
        'Returns the first rows of one table or view (SELECT * … LIMIT n) in the sandbox, to see what its values ' +
        `look like before writing a query. At most ${limits.maxRows} rows; long cells are cut.`,
      inputSchema: z
        .object({
          database: databaseArg(),
          table: z.string().min(1).max(1000).describe('The table or view name, as describe_schema shows it.'),
          rows: z.number().int().min(1).max(limits.maxRows).optional().describe('How many rows (default 5).'),
          format: formatArg,
        })
        .strict(),
      handler: async (a, signal) => {
        const path = ctx.databases.resolve(a.database as string);
        const rows = (a.rows as number | undefined) ?? Math.min(5, limits.maxRows);
        const r = await ctx.pool.exec(
          {
            db: path,
            sql: `SELECT * FROM ${quoteIdent(a.table as string)} LIMIT ${rows}`,
            maxRows: rows,
            timeoutMs: limits.timeoutMs,
          },
          signal,
        );
        return execResult(r, a.format as string | undefined, limits);
      },
    },
    {
      name: 'run_sql',
      title: 'Run a read-only SQL statement',
      description:
        'Runs ONE SQLite statement (SELECT, WITH … SELECT, VALUES, EXPLAIN, or an informational PRAGMA) read-only ' +
        "in Quarry's sandbox and returns the result as a text-to-SQL agent observes it. Anything that would write " +
        '(INSERT/UPDATE/DELETE, also inside WITH), change the schema, ATTACH, set a PRAGMA, load an extension or ' +
        'run several statements is refused with "rejected". ' +
        `A statement past ${limits.timeoutMs} ms is killed ("timeout"); at most ${limits.maxRows} rows and ` +
        `${limits.maxChars} characters come back, with a note saying how many rows there were. ` +
        'SQLite dialect: use LIMIT, strftime, || for concatenation.',
      inputSchema: z
        .object({
          database: databaseArg(),
          sql: sqlArg('The single SQLite statement to run.'),
          format: formatArg,
          max_rows: z
            .number()
            .int()
            .min(1)
            .max(limits.maxRows)
            .optional()
            .describe(`Rows to return (default ${defaultRows(limits)}).`),
          timeout_ms: z
            .number()
            .int()
            .min(1)
            .max(limits.timeoutMs)
            .optional()
            .describe(`Time limit in ms (default and maximum ${limits.timeoutMs}).`),
        })
        .strict(),
      handler: async (a, signal) => {
        const path = ctx.databases.resolve(a.database as string);
        const r = await ctx.pool.exec(
          {
            db: path,
            sql: a.sql as string,
            maxRows: (a.max_rows as number | undefined) ?? defaultRows(limits),
            timeoutMs: (a.timeout_ms as number | undefined) ?? limits.timeoutMs,
          },
          signal,
        );
        return execResult(r, a.format as string | undefined, limits);
      },
    },
    {
      name: 'explain_query',
      title: "Explain a query's plan",
      description:
        "Shows SQLite's query plan for one read-only statement (EXPLAIN QUERY PLAN) as a tree — table scans, index " +
        'searches, temporary B-trees for sorting or grouping, subqueries — with row counts of the scanned tables ' +
        'and warnings it implies (a full scan of a large table, an automatic index, a correlated subquery). The ' +
        'statement itself is not run; a statement run_sql would refuse is refused here too.',
      inputSchema: z
        .object({
          database: databaseArg(),
          sql: sqlArg('The statement to plan (without EXPLAIN).'),
        })
        .strict(),
      handler: async (a, signal) => {
        const path = ctx.databases.resolve(a.database as string);
        const r = await explainQueryPlan(ctx.pool, path, a.sql as string, { timeoutMs: limits.timeoutMs, signal });
        if (!r.ok) return errorResult(`${r.errorClass}: ${r.error}`);
        return textResult(capText(renderPlanText(r.plan), limits.maxChars));
      },
    },
    {
      name: 'ask_quarry',
      title: "Ask Quarry's text-to-SQL agent",
      description:
        "Puts a natural-language question about one database to Quarry's own text-to-SQL agent, which explores the " +
        'database with read-only SQL over several turns and answers with a final query. Returns that SQL and its ' +
        'result. Slower than run_sql (it calls a model); use it for questions you would rather delegate. The ' +
        "episode is saved as a trajectory in the workspace's .quarry/trajectories/.",
      inputSchema: z
        .object({
          database: databaseArg(),
          question: z.string().trim().min(1).max(limits.maxSqlChars).describe('The question, in plain language.'),
          protocol: z
            .enum(ASK_PROTOCOL_NAMES as unknown as [string, ...string[]])
            .optional()
            .describe(`The agent protocol (default ${ctx.agent?.protocol ?? 'skyrl'}).`),
          max_turns: z.number().int().min(1).max(30).optional().describe('Turn budget (default: the protocol’s).'),
        })
        .strict(),
      handler: async (a, signal) => askQuarry(ctx, a, signal),
    },
  ];
}

async function askQuarry(ctx: McpToolContext, a: Record<string, unknown>, signal: AbortSignal) {
  const agent = ctx.agent;
  if (!agent)
    throw new ToolFailure(
      'this server has no model for Quarry\'s agent: start it with "quarry mcp --model SPEC" (openai:URL#MODEL or ' +
        'onnx:DIR); run_sql and the other tools work without one',
    );
  const path = ctx.databases.resolve(a.database as string);
  const maxTurns = (a.max_turns as number | undefined) ?? agent.maxTurns;
  let outcome;
  try {
    outcome = await ask({
      question: a.question as string,
      dbPath: path,
      protocol: (a.protocol as ProtocolName | undefined) ?? agent.protocol,
      config: maxTurns === undefined ? {} : { maxTurns },
      model: agent.model,
      pool: ctx.pool,
      sampling: agent.sampling,
      signal,
      modelTimeoutMs: agent.modelTimeoutMs,
      queryTimeoutMs: ctx.limits.timeoutMs,
      resultRows: defaultRows(ctx.limits),
      saveTo: agent.saveTo,
      meta: { source: 'mcp' },
    });
  } catch (err) {
    if (err instanceof EpisodeSetupError) throw new ToolFailure(err.message);
    throw err;
  }
  const { record, final } = outcome;
  const saved = outcome.savedTo
    ? `trajectory appended to ${shownPath(ctx.cwd, outcome.savedTo)}`
    : (outcome.saveError ?? 'trajectory not saved');
  const summary = `${endText(record)}; ${saved}`;
  if (record.finalSql === null) return errorResult(`no answer: ${summary}`);
  const result = final ? renderObservation(final, { format: 'table', maxChars: ctx.limits.maxChars }) : '(not run)';
  const text = `Final SQL:\n${record.finalSql}\n\nResult:\n${result}\n\n(${summary})`;
  return {
    content: [{ type: 'text' as const, text }],
    structuredContent: {
      finalSql: record.finalSql,
      end: record.end,
      turns: record.turns.length,
      resultOk: final?.ok ?? null,
      trajectory: outcome.savedTo ? shownPath(ctx.cwd, outcome.savedTo) : null,
    },
    ...(final && !final.ok ? { isError: true } : {}),
  };
}

function endText(r: TrajectoryRecord): string {
  const turns = `${r.turns.length} turn${r.turns.length === 1 ? '' : 's'}`;
  if (r.end === 'answer') return `answered after ${turns}`;
  if (r.end === 'error') return `the episode failed after ${turns}: ${r.error ?? 'unknown error'}`;
  return `ended (${r.end}) after ${turns}`;
}

/** A path for an answer: relative to the workspace when inside it, else its file name. */
function shownPath(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel.startsWith('..') || rel === '' ? (path.split(sep).pop() ?? path) : rel.split(sep).join('/');
}

function execResult(r: ExecResult, format: string | undefined, limits: McpLimits): CallToolResult {
  const observation = renderObservation(r, {
    format: (format ?? 'df') as (typeof OBSERVATION_FORMATS)[number],
    maxChars: limits.maxChars,
  });
  const meta = {
    ok: r.ok,
    errorClass: r.errorClass,
    columns: r.columns,
    rowCount: r.rowCount,
    rowCountExact: r.rowCountExact !== false,
    truncated: r.truncated,
    ms: Math.round(r.ms * 10) / 10,
  };
  if (!r.ok) return { ...errorResult(`${r.errorClass}: ${observation}`), structuredContent: meta };
  return { content: [{ type: 'text', text: observation }], structuredContent: meta };
}

function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function capText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 40))}\n... (truncated to ${max} characters)`;
}

/**
 * Runs a tool's handler so that nothing escapes as a protocol error or a crash: a refusal or failure becomes a tool
 * error, and the served folder's absolute path is taken out of whatever the answer says.
 */
export async function runTool(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  signal: AbortSignal,
  root: string,
): Promise<CallToolResult> {
  let result: CallToolResult;
  try {
    result = await tool.handler(args, signal);
  } catch (err) {
    const known = err instanceof ToolFailure || err instanceof ServiceError;
    const message = (err as Error)?.message ?? String(err);
    result = errorResult(known ? message : `${tool.name} failed: ${message}`);
  }
  return unroot(result, root);
}

function unroot(result: CallToolResult, root: string): CallToolResult {
  const strip = (t: string) => (t.includes(root) ? t.replaceAll(root + sep, '').replaceAll(root, '.') : t);
  return {
    ...result,
    content: result.content.map((c) => (c.type === 'text' ? { ...c, text: strip(c.text) } : c)),
  };
}
