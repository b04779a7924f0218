// What the labeling panel writes, without the DOM: the queue's progress and position, a trajectory's database and
// turn counts, a turn's execution, a corrected SQL run's match verdict, the save status line, and the tag chips
// offered. The host-side unit tests import it.
import type { Label, QueueInfo, RunOutcome, TagInfo, TrajectoryRecord } from '../../src/protocol/labeling';
import type { TurnExec } from '../../src/core/trajectories/types';

/** "12 / 40 labeled". */
export function progressText(queue: QueueInfo): string {
  return `${queue.labeled.toLocaleString()} / ${queue.total.toLocaleString()} labeled`;
}

/** Where the reviewer is in the queue ("item 3 of 40 in the queue"), or that it is empty. */
export function whereText(queue: QueueInfo, position: number): string {
  return queue.size === 0
    ? 'queue empty'
    : `item ${(position + 1).toLocaleString()} of ${queue.size.toLocaleString()} in the queue`;
}

/** The database's id, else its file name. */
export function dbName(r: TrajectoryRecord): string {
  return r.task.db.id ?? r.task.db.path.split(/[\\/]/).pop() ?? r.task.db.path;
}

/** "3 turns of 5": the turns taken, and the protocol's budget when it has one. */
export function turnsText(r: TrajectoryRecord): string {
  return (
    `${r.turns.length} turn${r.turns.length === 1 ? '' : 's'}` +
    `${r.protocol.budget ? ` of ${r.protocol.budget}` : ''}`
  );
}

/** A turn's execution: its rows and columns (cut when truncated), or its error class and message. */
export function execText(exec: TurnExec): string {
  return exec.ok
    ? `${exec.rowCount.toLocaleString()} row${exec.rowCount === 1 ? '' : 's'}` +
        `${exec.columns.length ? ` · ${exec.columns.join(', ')}` : ''}${exec.truncated ? ' (cut)' : ''}`
    : `${exec.errorClass ?? 'error'}: ${exec.error ?? ''}`;
}

/** How a run's result compares with the reference: `kind` is its styling, `match` whether it has the match's id. */
interface RunVerdict {
  kind: 'muted' | 'ok' | 'error' | 'warn';
  text: string;
  match: boolean;
}

export function runVerdict(o: RunOutcome): RunVerdict {
  const ref = o.against === 'gold' ? 'the gold result' : o.against === 'final' ? 'the final SQL’s result' : '';
  if (o.against === 'none') return { kind: 'muted', text: 'No gold and no final SQL to compare with.', match: false };
  if (o.match === true) return { kind: 'ok', text: `✓ Matches ${ref}.`, match: true };
  if (o.match === false)
    return {
      kind: 'error',
      text: `✗ Differs from ${ref}: ${o.reason ?? ''}${o.detail ? ` (${o.detail})` : ''}`,
      match: true,
    };
  return { kind: 'warn', text: `Not compared: ${o.detail ?? o.reason ?? 'no reference'}`, match: true };
}

/** The status line under the form: saving, unsaved edits, the stored label (who, when), or not labeled yet. */
export function statusText(s: {
  saving: boolean;
  dirty: boolean;
  label: Label | null;
  lastSavedAt: string | null;
}): string {
  if (s.saving) return 'Saving…';
  if (s.dirty) return 'Unsaved changes (s saves; moving on saves too).';
  if (s.label)
    return (
      `${s.lastSavedAt ? 'Saved' : 'Labeled'} ${s.label.verdict ?? 'without a verdict'} by ${s.label.labeler}, ` +
      `${new Date(s.label.updatedAt).toLocaleString()}.`
    );
  return 'Not labeled yet.';
}

/** A typed tag as the store keeps it: trimmed, inner whitespace collapsed, lower case ('' when nothing is left). */
export function tagName(typed: string): string {
  return typed.trim().replace(/\s+/g, ' ').toLowerCase();
}

/** The chips: every tag the store knows, then the item's own tags it does not (a reviewer's, not yet listed). */
export function tagChoices(known: readonly TagInfo[], selected: ReadonlySet<string>): TagInfo[] {
  const names = new Set(known.map((t) => t.name));
  const extra = [...selected].filter((t) => !names.has(t)).map((name) => ({ name, builtin: false }));
  return [...known, ...extra];
}
