// A run with nothing scored, said instead of charted: EX 0.0% and four empty charts over zero trajectories read as a
// model that got everything wrong. Without the DOM, so what it says is unit-tested.
import type { RunDiagnostics } from '../../src/core/rewards/report';

/** Why nothing in the run was scored, one line per reason (with how many), or null when something was. */
export function nothingScored(run: Pick<RunDiagnostics, 'scored' | 'skipped'>): string[] | null {
  if (run.scored > 0) return null;
  if (run.skipped.length === 0) return ['The file holds no trajectory to score.'];
  const byReason = new Map<string, number>();
  for (const s of run.skipped) {
    // "database not found: /a/b.sqlite" and "…: /c/d.sqlite" are one reason.
    const reason = s.reason.replace(/^(database not found):.*$/, '$1');
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
  return [...byReason]
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${n} trajector${n === 1 ? 'y' : 'ies'}: ${reason}`);
}
