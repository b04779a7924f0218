// "Run" on a reviewer's corrected SQL: execute it in the sandbox and say whether its result matches the gold — with
// the evaluator's own query preparation and comparator (computeVerdict, as the reward engine's exec term uses) — or,
// when the task has no gold, whether it matches what the trajectory's final SQL returns.
import type { ExecRequest, ExecResult } from '../db/types';
import { evalMode, type EvalModeName } from '../eval/modes';
import { computeVerdict } from '../rewards/verdict';
import { createScoringResources } from '../rewards/resources';
import type { ExecReason } from '../eval/execution';

export interface CorrectedSqlCheck {
  /** The corrected SQL's own run (as written; null only when there was nothing to run). */
  result: ExecResult | null;
  /** What it was compared with: the task's gold SQL, the trajectory's final SQL, or nothing (neither exists). */
  against: 'gold' | 'final' | 'none';
  /** null when not compared (no reference, or the reference itself failed). */
  match: boolean | null;
  reason: ExecReason | null;
  detail: string | null;
}

export interface CheckOptions {
  sql: string;
  dbPath: string;
  gold: string | null;
  finalSql: string | null;
  run: (req: ExecRequest) => Promise<ExecResult>;
  timeoutMs: number;
  mode?: EvalModeName;
}

const present = (s: string | null): s is string => s !== null && s.trim() !== '';

export async function checkCorrectedSql(opts: CheckOptions): Promise<CorrectedSqlCheck> {
  if (!present(opts.sql))
    return { result: null, against: 'none', match: null, reason: 'empty-prediction', detail: 'nothing to run' };
  const against = present(opts.gold) ? 'gold' : present(opts.finalSql) ? 'final' : 'none';
  if (against === 'none') {
    const result = await opts.run({
      db: opts.dbPath,
      sql: opts.sql,
      timeoutMs: opts.timeoutMs,
      maxRows: Infinity,
      maxCellChars: Infinity,
    });
    return {
      result,
      against,
      match: null,
      reason: result.ok ? null : result.errorClass === 'timeout' ? 'pred-timeout' : 'pred-error',
      detail: result.error,
    };
  }
  const reference = against === 'gold' ? opts.gold! : opts.finalSql!;
  const resources = createScoringResources({ run: opts.run, timeoutMs: opts.timeoutMs });
  const v = await computeVerdict(opts.sql, reference, opts.dbPath, evalMode(opts.mode ?? 'spider'), resources);
  // The mode's preparation may have rewritten the query (spider drops DISTINCT); show the SQL as written, run as is.
  // (a cache hit when the preparation left it alone).
  const result = await resources.exec(opts.dbPath, opts.sql);
  const referenceFailed = v.reason === 'gold-error' || v.reason === 'gold-timeout';
  const detail = referenceFailed
    ? `the ${against === 'gold' ? 'gold' : 'final'} SQL failed: ${v.detail ?? 'error'}`
    : (v.detail ?? null);
  return { result, against, match: referenceFailed ? null : v.correct, reason: v.reason, detail };
}
