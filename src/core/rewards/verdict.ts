// One predicted SQL against the gold on one database, with the evaluator's own pieces: the mode's query rewriting
// (prepare), its comparator (compare) and its failure reasons. The order of checks is the evaluator's (execution.ts
// decide): a gold failure is reported before anything about the prediction.
import type { ExecResult } from '../db/types';
import type { EvalMode } from '../eval/modes';
import { toResultTable } from '../eval/pyValues';
import type { ExecOutcome, ScoringResources } from './types';

function failure(r: ExecResult, who: 'pred' | 'gold'): 'pred-error' | 'pred-timeout' | 'gold-error' | 'gold-timeout' {
  return r.errorClass === 'timeout' ? `${who}-timeout` : `${who}-error`;
}

export async function computeVerdict(
  sql: string | null,
  goldSql: string,
  dbPath: string,
  mode: EvalMode,
  resources: ScoringResources,
): Promise<ExecOutcome> {
  if (sql === null)
    return { sql, correct: false, reason: 'missing-prediction', pred: null, gold: null, goldEmpty: false };
  if (sql.trim() === '')
    return { sql, correct: false, reason: 'empty-prediction', pred: null, gold: null, goldEmpty: false };
  const prepared = mode.prepare(goldSql, sql, {});
  const [gold, pred] = await Promise.all([
    resources.exec(dbPath, prepared.gold),
    resources.exec(dbPath, prepared.pred),
  ]);
  if (!gold.ok)
    return {
      sql,
      correct: false,
      reason: failure(gold, 'gold'),
      detail: gold.error ?? undefined,
      pred,
      gold,
      goldEmpty: false,
    };
  const goldEmpty = gold.rows.length === 0;
  if (!pred.ok)
    return {
      sql,
      correct: false,
      reason: failure(pred, 'pred'),
      detail: pred.error ?? undefined,
      pred,
      gold,
      goldEmpty,
    };
  const outcome = mode.compare(toResultTable(gold), toResultTable(pred), prepared.orderMatters);
  return { sql, correct: outcome === 'match', reason: outcome, pred, gold, goldEmpty };
}
