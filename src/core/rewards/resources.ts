// Caches shared by many scorings: one execution per (database, SQL as run), one parse per SQL per analysis.
import type { ExecRequest, ExecResult } from '../db/types';
import type { SqlPool } from '../db/pool';
import type { ScoringResources } from './types';

/** Default per-statement budget for reward execution, ms (the spider evaluator's own default is 60 s; rewards are
 *  computed in training loops where one runaway query must not stall a batch). */
export const DEFAULT_REWARD_TIMEOUT_MS = 30_000;

export interface ResourceOptions {
  /** Where statements run: a sandbox pool (createSqlPool) or any function with the same contract. */
  run: SqlPool | ((req: ExecRequest) => Promise<ExecResult>);
  timeoutMs?: number;
  /** Drop cached executions once this many are held (results can be large); default 50,000. */
  maxExecEntries?: number;
}

/** Per namespace; predictions are rarely repeated, so a long run would otherwise keep every parse. */
const MAX_MEMO_ENTRIES = 200_000;

export function createScoringResources(opts: ResourceOptions): ScoringResources & { stats(): ResourceStats } {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_REWARD_TIMEOUT_MS;
  const runOne = typeof opts.run === 'function' ? opts.run : opts.run.exec.bind(opts.run);
  const maxExec = opts.maxExecEntries ?? 50_000;
  const execCache = new Map<string, Promise<ExecResult>>();
  const memos = new Map<string, Map<string, unknown>>();
  const stats: ResourceStats = { execRuns: 0, execHits: 0, memoComputes: 0, memoHits: 0 };
  return {
    timeoutMs,
    exec(db, sql) {
      const key = db + '\0' + sql;
      const hit = execCache.get(key);
      if (hit) {
        stats.execHits++;
        return hit;
      }
      if (execCache.size >= maxExec) execCache.clear();
      stats.execRuns++;
      const p = runOne({ db, sql, timeoutMs, maxRows: Infinity, maxCellChars: Infinity });
      execCache.set(key, p);
      // A pool failure (closed pool, killed worker) is not a verdict about the SQL: do not keep it.
      p.catch(() => execCache.delete(key));
      return p;
    },
    memo<T>(namespace: string, key: string, compute: () => T): T {
      let m = memos.get(namespace);
      if (!m) {
        m = new Map();
        memos.set(namespace, m);
      }
      if (m.has(key)) {
        stats.memoHits++;
        return m.get(key) as T;
      }
      stats.memoComputes++;
      if (m.size >= MAX_MEMO_ENTRIES) m.clear();
      const v = compute();
      m.set(key, v);
      return v;
    },
    stats: () => ({ ...stats }),
  };
}

export interface ResourceStats {
  execRuns: number;
  execHits: number;
  memoComputes: number;
  memoHits: number;
}
