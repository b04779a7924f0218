// Python's sqlite3 module links a SQLite that accepts "double-quoted" string literals (a double-quoted token that
// names no column is taken as a string); better-sqlite3's SQLite is built without that fallback (SQLITE_DQS=0).
// Spider's gold SQL relies on it (WHERE name = "Janessa"), so the evaluator reproduces it: when SQLite reports that
// a double-quoted token names no column, that token is rewritten as a single-quoted string and the query rerun —
// the same choice SQLite makes with the fallback enabled (identifier first, string literal otherwise).
import type { ExecRequest, ExecResult } from '../db/types';
import type { BatchExecutor } from './execution';

const DQS_ERROR = /^no such column: "((?:[^"]|"")*)" - should this be a string literal in single-quotes\?/;

/** Rewrites every double-quoted token spelling `text` (outside single-quoted strings) as a single-quoted string. */
export function quoteAsString(sql: string, text: string): string {
  const target = `"${text.replace(/"/g, '""')}"`;
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'") {
      let j = i + 1;
      while (j < sql.length) { if (sql[j] === "'") { if (sql[j + 1] === "'") { j += 2; continue; } j++; break; } j++; }
      out += sql.slice(i, j); i = j;
    } else if (c === '"') {
      let j = i + 1;
      while (j < sql.length) { if (sql[j] === '"') { if (sql[j + 1] === '"') { j += 2; continue; } j++; break; } j++; }
      const tok = sql.slice(i, j);
      out += tok === target ? `'${text.replace(/'/g, "''")}'` : tok;
      i = j;
    } else { out += c; i++; }
  }
  return out;
}

/** The rewritten SQL when `r` failed only because of a double-quoted string literal, else undefined. */
export function dqsRetry(req: ExecRequest, r: ExecResult): string | undefined {
  if (r.ok || r.errorClass !== 'sql' || !r.error) return undefined;
  const m = DQS_ERROR.exec(r.error);
  if (!m) return undefined;
  const sql = quoteAsString(req.sql, m[1].replace(/""/g, '"'));
  return sql === req.sql ? undefined : sql;
}

/** Wraps an executor so double-quoted string literals behave as in Python's sqlite3 (a few rounds per query). */
export function withDoubleQuotedStrings(run: BatchExecutor, maxRounds = 16): BatchExecutor {
  return async (reqs) => {
    const results = await run(reqs);
    let pending = reqs.map((_, i) => i);
    const current = reqs.slice();
    for (let round = 0; round < maxRounds && pending.length; round++) {
      const retry: number[] = [];
      for (const i of pending) {
        const sql = dqsRetry(current[i], results[i]);
        if (sql !== undefined) { current[i] = { ...current[i], sql }; retry.push(i); }
      }
      if (!retry.length) break;
      const again = await run(retry.map((i) => current[i]));
      retry.forEach((i, k) => { results[i] = again[k]; });
      pending = retry;
    }
    return results;
  };
}
