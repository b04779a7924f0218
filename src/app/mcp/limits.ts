// The caps `quarry mcp` holds every tool call to. Each is a server-side maximum set by a flag; a call may ask for less
// (its arguments' schemas carry the maximum, so a model sees it and a larger value is refused as a tool error).
import { DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_MS } from '../../core/db/limits';
import { DEFAULT_OBSERVATION_CHARS } from '../../core/db/observation';

export interface McpLimits {
  /** Rows a run_sql or sample_rows answer keeps at most (--max-rows). */
  maxRows: number;
  /** Characters of an observation, a plan or an answer at most (--max-chars). */
  maxChars: number;
  /** Characters of a rendered schema at most (--max-schema-chars). */
  maxSchemaChars: number;
  /** Longest a statement may run, ms (--timeout-ms); past it its worker is killed. */
  timeoutMs: number;
  /** Longest SQL text or question a call may send, characters (--max-sql-chars). */
  maxSqlChars: number;
  /** Most example rows per table in a schema (--max-sample-rows). */
  maxSampleRows: number;
}

export const DEFAULT_MCP_LIMITS: Readonly<McpLimits> = Object.freeze({
  maxRows: 200,
  maxChars: DEFAULT_OBSERVATION_CHARS,
  maxSchemaChars: 40_000,
  timeoutMs: DEFAULT_TIMEOUT_MS,
  maxSqlChars: 100_000,
  maxSampleRows: 10,
});

/** Rows a call gets when it does not say: the sandbox's default, never above the cap. */
export function defaultRows(limits: McpLimits): number {
  return Math.min(DEFAULT_MAX_ROWS, limits.maxRows);
}
