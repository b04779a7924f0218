// The "SQL Results" of MTSQL-R1's memory come from running each earlier turn's SQL. A protocol runs no SQL, so the
// caller fills Task.history[i].result before the episode: the editor from the results it already showed, datasets
// (CoSQL/SParC gold history) through withHistoryResults.
import type { ExecResult } from '../../../db/types';
import type { SqlPool } from '../../../db/pool';
import type { Task } from '../../types';
import { pythonErrorText } from '../common';
import { pyRows } from './pyRepr';

/** Rows the memory keeps per earlier turn (see memory.ts for why rows, not the label's "50 characters"). */
export const MEMORY_RESULT_ROWS = 50;

/** A history entry's `result` text for an ExecResult: Python's str(rows) of the first rows, or the error. */
export function historyResultText(r: ExecResult, maxRows = MEMORY_RESULT_ROWS): string {
  return r.ok ? pyRows(r, maxRows) : pythonErrorText(r);
}

interface HistoryResultOptions {
  maxRows?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A copy of the task whose history entries all carry `result` (entries that already have one are kept as they are). */
export async function withHistoryResults(task: Task, pool: SqlPool, opts: HistoryResultOptions = {}): Promise<Task> {
  const history = task.history ?? [];
  if (history.every((h) => typeof h.result === 'string')) return task;
  const maxRows = opts.maxRows ?? MEMORY_RESULT_ROWS;
  const filled = await Promise.all(
    history.map(async (h) => {
      if (typeof h.result === 'string') return h;
      const r = await pool.exec({ db: task.dbPath, sql: h.sql, timeoutMs: opts.timeoutMs, maxRows }, opts.signal);
      return { ...h, result: historyResultText(r, maxRows) };
    }),
  );
  return { ...task, history: filled };
}
