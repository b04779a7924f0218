// The header's scoring count as text, without the DOM: how many trajectories got a reward, and when some could not be
// scored, why ("0/4 scored — no gold SQL"), so a file with nothing to score against never reads as fully scored.

export interface ScoringState {
  /** Trajectories looked at: scored, or skipped with a reason. */
  done: number;
  total: number;
  running: boolean;
  /** Of `done`, those that got a reward. */
  scored: number;
  /** Why the others were not scored (the most common reason), or null. */
  unscored: string | null;
}

/** A skip reason, short enough for the header (the full one is in each row's tooltip and the detail). */
function shortReason(reason: string): string {
  if (/^no gold SQL/i.test(reason)) return 'no gold SQL';
  if (/database (?:not found|is missing)|no such database|no database/i.test(reason)) return 'database not found';
  const first = reason.split(/[:\n]/)[0].trim();
  return first.length > 60 ? `${first.slice(0, 59)}…` : first;
}

export function scoreStatusText(s: ScoringState): string {
  const n = (x: number) => x.toLocaleString('en-US');
  if (s.running) return `scoring ${n(s.done)}/${n(s.total)}…`;
  if (!s.total) return '';
  const head = `${n(s.scored)}/${n(s.total)} scored`;
  const skipped = s.done - s.scored;
  if (skipped <= 0) return head;
  const why = s.unscored ? shortReason(s.unscored) : 'not scorable';
  return s.scored === 0 ? `${head} — ${why}` : `${head} — ${n(skipped)} not: ${why}`;
}
