// Judges one gold query and the predictions scored against it from their results, keeping only verdicts: run inside
// the SQL worker (eval groups, see db/protocol.ts) so result rows never cross a process boundary, or in the caller.
import type { ErrorClass, ExecResult } from '../db/types';
import { evalMode, type AnswerCheckName } from './modes';
import { toResultTable } from './pyValues';
import type { CompareOutcome } from './resultEq';

/** What a gold or predicted statement did, without its rows. */
interface StepSummary {
  ok: boolean;
  errorClass: ErrorClass | null;
  error: string | null;
}
/** The gold statement's summary; `empty` when it returned no rows, `trivial` when empty or every cell is 0, NULL or
 *  '' (a count of nothing, a sum over nothing): an answer many wrong queries share. */
export interface GoldStep extends StepSummary {
  empty: boolean;
  trivial?: boolean;
}

/** No rows, or nothing but 0, NULL and '' in them. */
function trivialResult(r: ExecResult): boolean {
  return r.rows.every((row) => row.every((c) => c === null || c === '' || c === 0 || c === 0n));
}
/** A prediction's summary and, when it ran, how its result compares with the gold's. */
export interface PredStep extends StepSummary {
  outcome: CompareOutcome | null;
  /** The mode's partial-credit score when it has one (bird-f1), once the prediction ran. */
  score?: number;
}

/** How a group's results are compared: the mode's comparator, and whether row order matters (spider, ORDER BY). */
export interface JudgeParams {
  mode: AnswerCheckName;
  orderMatters: boolean;
}

/**
 * Cell for cell the same rows in the same order, with the same storage classes: every mode scores that a match
 * (the official comparators accept it through the identity permutation), so it skips the comparator's sorting and
 * hashing. A prediction that returns what the gold returns is the common case.
 */
function identicalResults(a: ExecResult, b: ExecResult): boolean {
  if (a === b) return true;
  if (a.rows.length !== b.rows.length || a.columns.length !== b.columns.length) return false;
  const fa = toResultTable(a).floatColumns,
    fb = toResultTable(b).floatColumns;
  if (fa.some((f, i) => f !== fb[i])) return false;
  for (let r = 0; r < a.rows.length; r++) {
    const x = a.rows[r],
      y = b.rows[r];
    if (x.length !== y.length) return false;
    for (let c = 0; c < x.length; c++) {
      const u = x[c],
        v = y[c];
      if (u === v) continue;
      if (u instanceof Uint8Array && v instanceof Uint8Array && Buffer.from(u).equals(v)) continue;
      return false;
    }
  }
  return true;
}

const summary = (r: ExecResult): StepSummary => ({ ok: r.ok, errorClass: r.errorClass, error: r.error });

/**
 * A judge fed a group's results in order: the gold's first (its summary comes back, and the group stops there when
 * it failed), then each prediction's (its summary and comparison). It holds the gold rows between steps.
 */
export function createJudge(params: JudgeParams): (r: ExecResult) => { value: GoldStep | PredStep; last: boolean } {
  const mode = evalMode(params.mode);
  let gold: ExecResult | null = null;
  return (r) => {
    if (!gold) {
      gold = r;
      const value: GoldStep = { ...summary(r), empty: r.ok && r.rows.length === 0, trivial: r.ok && trivialResult(r) };
      return { value, last: !r.ok };
    }
    const same = r.ok && identicalResults(gold, r);
    const outcome = !r.ok
      ? null
      : same
        ? 'match'
        : mode.compare(toResultTable(gold), toResultTable(r), params.orderMatters);
    const value: PredStep = { ...summary(r), outcome };
    if (mode.score && r.ok) value.score = same ? 1 : mode.score(toResultTable(gold), toResultTable(r));
    return { value, last: false };
  };
}
