// What Quarry's language-model tools do, without `vscode`: list the workspace's databases, describe one's schema in a
// prompt style, run one read-only statement in the sandbox (the observation SkyRL-SQL's agent sees: pandas-style
// rows, Python's error text), and explain a statement's plan. Every input comes from a model and is checked here; a
// database must be one of the workspace's. Each call returns the text the model reads and, for the trajectory, what
// ran. The editor's glue (confirmation, trust, the grid, the store) is tools.ts.
import { relative, isAbsolute, basename } from 'node:path';
import type { SqlPool } from '../../core/db/pool';
import type { ExecResult } from '../../core/db/types';
import { renderObservation } from '../../core/db/observation';
import { pythonErrorText } from '../../core/agent/protocols/common';
import { introspectViaPool } from '../../core/db/schema/viaPool';
import { renderSchema, SCHEMA_STYLES, type SchemaStyle } from '../../core/db/schema';
import { explainQueryPlan, renderPlanText } from '../../core/db/queryPlan';

/** The tools, by the names package.json contributes them under. */
export const LM_TOOLS = {
  listDatabases: 'quarry_list_databases',
  describeSchema: 'quarry_describe_schema',
  runSql: 'quarry_run_sql',
  explainPlan: 'quarry_explain_plan',
  ask: 'quarry_ask',
} as const;
export type LmToolName = (typeof LM_TOOLS)[keyof typeof LM_TOOLS];

/** Longest statement or question a model may pass. */
const MAX_SQL_CHARS = 100_000;
export const MAX_QUESTION_CHARS = 4000;
/** Rows a model may ask to see at most (the observation is capped at its characters anyway). */
const MAX_TOOL_ROWS = 200;

export interface ToolContext {
  pool: SqlPool;
  /** The workspace's SQLite files (absolute paths): the only databases a tool may open. */
  databases: readonly string[];
  /** The workspace folder, for relative names. */
  workspace: string | undefined;
  timeoutMs: number;
  /** Rows shown by default and the observation's character cap (quarry.observation.*). */
  maxRows: number;
  maxChars: number;
}

/** A call's outcome: the text the model reads, and what ran (for the trajectory and the grid). */
export interface ToolOutcome {
  text: string;
  /** The database the call was about, when it named one that exists. */
  db?: string;
  /** The statement run or planned. */
  sql?: string;
  exec?: ExecResult;
  /** True when the input was refused before anything ran. */
  refused?: boolean;
}

export class ToolInputError extends Error {}

/** The name a database is shown under: workspace-relative when inside it. */
export function databaseLabel(path: string, workspace: string | undefined): string {
  if (!workspace) return basename(path);
  const rel = relative(workspace, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

function str(input: Record<string, unknown>, key: string, max: number, required = true): string | undefined {
  const v = input[key];
  if (v === undefined || v === null) {
    if (required) throw new ToolInputError(`"${key}" is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw new ToolInputError(`"${key}" must be a string`);
  if (required && v.trim() === '') throw new ToolInputError(`"${key}" must not be empty`);
  if (v.length > max) throw new ToolInputError(`"${key}" is longer than ${max} characters`);
  return v;
}

function inputObject(input: unknown): Record<string, unknown> {
  if (!input || typeof input !== 'object' || Array.isArray(input))
    throw new ToolInputError('the input must be a JSON object');
  return input as Record<string, unknown>;
}

/**
 * The workspace database `name` stands for: its workspace-relative path, its absolute path, or its file name when
 * that is unique. Anything else is refused with the list, so the model can try again.
 */
export function resolveToolDatabase(ctx: ToolContext, name: string): string {
  const want = name.trim().replace(/\\/g, '/');
  const labels = ctx.databases.map((p) => ({ path: p, label: databaseLabel(p, ctx.workspace) }));
  const exact = labels.find((d) => d.path === want || d.label === want || d.label === want.replace(/^\.\//, ''));
  if (exact) return exact.path;
  const byName = labels.filter((d) => basename(d.path) === want || basename(d.path, '.sqlite') === want);
  if (byName.length === 1) return byName[0].path;
  const list = labels.map((d) => d.label).join(', ') || '(none)';
  throw new ToolInputError(
    byName.length > 1
      ? `"${name}" names several databases; use one of: ${list}`
      : `no workspace database "${name}"; the databases are: ${list}`,
  );
}

/** The database, statement and optional fields of a run or plan call. */
export function readSqlInput(
  ctx: ToolContext,
  raw: unknown,
): { db: string; sql: string; maxRows?: number; question?: string; openInGrid: boolean } {
  const input = inputObject(raw);
  const db = resolveToolDatabase(ctx, str(input, 'database', 4096) as string);
  const sql = str(input, 'sql', MAX_SQL_CHARS) as string;
  const question = str(input, 'question', MAX_QUESTION_CHARS, false);
  let maxRows: number | undefined;
  if (input.maxRows !== undefined) {
    const n = input.maxRows;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_TOOL_ROWS)
      throw new ToolInputError(`"maxRows" must be a whole number from 1 to ${MAX_TOOL_ROWS}`);
    maxRows = n;
  }
  if (input.openInGrid !== undefined && typeof input.openInGrid !== 'boolean')
    throw new ToolInputError('"openInGrid" must be true or false');
  return { db, sql, maxRows, question, openInGrid: input.openInGrid === true };
}

export function listDatabases(ctx: ToolContext): ToolOutcome {
  if (!ctx.databases.length) return { text: 'There are no SQLite databases in this workspace.' };
  return {
    text:
      `${ctx.databases.length} SQLite database${ctx.databases.length === 1 ? '' : 's'} in the workspace ` +
      '(pass one of these names as "database"):\n' +
      ctx.databases.map((p) => `- ${databaseLabel(p, ctx.workspace)}`).join('\n'),
  };
}

export async function describeSchema(ctx: ToolContext, raw: unknown): Promise<ToolOutcome> {
  const input = inputObject(raw);
  const db = resolveToolDatabase(ctx, str(input, 'database', 4096) as string);
  const style = (str(input, 'style', 16, false) ?? 'ddl') as SchemaStyle;
  if (!SCHEMA_STYLES.includes(style)) throw new ToolInputError(`"style" must be one of ${SCHEMA_STYLES.join(', ')}`);
  const info = await introspectViaPool(ctx.pool, db, { sampleRows: style === 'ddl' ? 3 : 0 });
  const label = databaseLabel(db, ctx.workspace);
  return { db, text: `Schema of ${label} (${style}):\n${renderSchema(info, { style, maxChars: 60_000 })}` };
}

/** Runs the statement read-only in the sandbox; the model reads SkyRL-SQL's observation of it. */
export async function runSql(ctx: ToolContext, raw: unknown, signal?: AbortSignal): Promise<ToolOutcome> {
  const { db, sql, maxRows } = readSqlInput(ctx, raw);
  const exec = await ctx.pool.exec({ db, sql, timeoutMs: ctx.timeoutMs, maxRows: maxRows ?? ctx.maxRows }, signal);
  const body = exec.ok ? renderObservation(exec, { format: 'df', maxChars: ctx.maxChars }) : pythonErrorText(exec);
  const note = exec.ok
    ? `\n(${exec.rowCount.toLocaleString('en-US')}${exec.rowCountExact === false ? '+' : ''} row` +
      `${exec.rowCount === 1 ? '' : 's'}, ${exec.ms.toFixed(1)} ms)`
    : exec.errorClass === 'rejected'
      ? '\n(Quarry runs statements read-only: only queries can run.)'
      : '';
  return { db, sql, exec, text: body + note };
}

export async function explainPlan(ctx: ToolContext, raw: unknown, signal?: AbortSignal): Promise<ToolOutcome> {
  const { db, sql } = readSqlInput(ctx, raw);
  const r = await explainQueryPlan(ctx.pool, db, sql, { timeoutMs: ctx.timeoutMs, signal });
  return { db, sql, text: r.ok ? renderPlanText(r.plan) : `No plan (${r.errorClass}): ${r.error}` };
}
