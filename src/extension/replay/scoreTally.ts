// What Replay's header counts of a file's scoring: the records looked at, those that got a reward, and why the others
// were skipped (the most common reason), so "scored" never counts a trajectory that had nothing to score against.
import type { ScoreOutcome } from '../../core/trajectories/scoring';

export interface ScoreTally {
  /** Outcomes there are (scored or skipped). */
  done: number;
  scored: number;
  /** The most common skip reason, or null when none was skipped. */
  unscored: string | null;
}

export function scoreTally(outcomes: Iterable<ScoreOutcome | undefined>): ScoreTally {
  let done = 0;
  let scored = 0;
  const reasons = new Map<string, number>();
  for (const o of outcomes) {
    if (!o) continue;
    done++;
    if (o.status === 'scored') scored++;
    else reasons.set(o.reason, (reasons.get(o.reason) ?? 0) + 1);
  }
  let unscored: string | null = null;
  let most = 0;
  for (const [reason, n] of reasons)
    if (n > most) {
      most = n;
      unscored = reason;
    }
  return { done, scored, unscored };
}
