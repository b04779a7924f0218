// Which gold queries make a question useless for RL, found with the integrity flags (rewards/integrity.ts): a gold
// that fails or times out scores every rollout 0, and a gold with an empty result lets an empty answer win for free
// (MTIR-SQL §4.1 filters both). Each gold is run once; its result is checked as a prediction equal to the gold.
import type { ExecResult } from '../db/types';
import type { ExecOutcome } from '../rewards/types';
import { checkIntegrity, type IntegrityItem } from '../rewards/integrity';

interface GoldRun {
  /** The question's id. */
  id: string;
  gold: string;
  /** The gold run on the question's database (a row cap of 1 is enough: only emptiness matters). */
  result: ExecResult;
}

export interface GoldFindings {
  /** Question id → why its gold fails (`gold-error: no such column: x`). */
  failing: Map<string, string>;
  /** Questions whose gold returns no rows. */
  empty: Set<string>;
}

function outcomeOf(run: GoldRun): ExecOutcome {
  const r = run.result;
  if (!r.ok) {
    return {
      sql: run.gold,
      correct: false,
      reason: r.errorClass === 'timeout' ? 'gold-timeout' : 'gold-error',
      detail: r.error ?? undefined,
      pred: null,
      gold: r,
      goldEmpty: false,
    };
  }
  return { sql: run.gold, correct: true, reason: 'match', pred: r, gold: r, goldEmpty: r.rows.length === 0 };
}

export function checkGolds(runs: readonly GoldRun[]): GoldFindings {
  const items: IntegrityItem[] = runs.map((run) => {
    const verdict = outcomeOf(run);
    return { id: run.id, goldSql: run.gold, predSql: run.gold, verdict, reward: verdict.correct ? 1 : 0 };
  });
  const report = checkIntegrity(items);
  const failing = new Map<string, string>();
  for (const g of report.goldFailures)
    for (const id of g.items) failing.set(id, `${g.reason}: ${g.detail || 'no detail'}`);
  return { failing, empty: new Set(report.emptyGoldWins.items) };
}
