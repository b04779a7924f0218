// One predicted SQL against the gold on one database, with the evaluator's own pieces: the mode's query rewriting
// (prepare), its comparator (compare) and its failure reasons. The order of checks is the evaluator's (execution.ts
// decide): a gold failure is reported before anything about the prediction. With a test suite, an answer right on its
// own database is checked on every database of the suite as well, and is right only if it matches on all of them
// (the first that disagrees, in file-name order, is named).
import type { ExecResult } from '../db/types';
import type { EvalMode } from '../eval/modes';
import { toResultTable } from '../eval/pyValues';
import type { SuiteDatabases } from './testSuite';
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
  suite?: SuiteDatabases,
): Promise<ExecOutcome> {
  const single = await singleVerdict(sql, goldSql, dbPath, mode, resources);
  if (!suite) return single;
  const databases = suite.files.length;
  if (!single.correct) return { ...single, suite: { databases, singleCorrect: false } };
  const prepared = mode.prepare(goldSql, sql!, {});
  // Every database at once: a right answer must run on all of them anyway, and the pool runs them in parallel.
  const runs = await Promise.all(
    suite.files.map((f) => Promise.all([resources.exec(f, prepared.gold), resources.exec(f, prepared.pred)])),
  );
  let goldEmpty = single.goldEmpty;
  for (let i = 0; i < runs.length; i++) {
    const [gold, pred] = runs[i];
    const name = suite.names[i];
    const miss = (reason: ExecOutcome['reason'], detail?: string): ExecOutcome => ({
      ...single,
      correct: false,
      reason,
      detail,
      suite: { databases, singleCorrect: true, disagreed: name },
    });
    if (!gold.ok) return miss(failure(gold, 'gold'), `${gold.error ?? 'error'} (on ${name})`);
    if (!pred.ok) return miss(failure(pred, 'pred'), `${pred.error ?? 'error'} (on ${name})`);
    goldEmpty &&= gold.rows.length === 0;
    const outcome = mode.compare(toResultTable(gold), toResultTable(pred), prepared.orderMatters);
    if (outcome !== 'match') return miss(outcome, `differs on ${name}`);
  }
  return { ...single, goldEmpty, suite: { databases, singleCorrect: true } };
}

async function singleVerdict(
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
