// Rebuilding an Ask conversation after a window reload. The webview's saved state names the questions (trajectory
// ids) and what it showed; the trajectory store holds what they were. Everything the host acts on (question, final
// SQL, the record saved or labeled) comes from the store; only the rows a turn showed may come from the saved state,
// as display. No `vscode` here, so it is tested without an editor.
import type { AskState, ExchangeView } from '../../protocol/ask';
import { applyEvent } from '../../protocol/askState';
import type { AskRestore, ShownRows } from '../../protocol/restore';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import { recordEvents } from './events';

interface Rebuilt {
  /** Per exchange appended to the state, in order: its record, and whether its result was shown (to run it again). */
  exchanges: { record: TrajectoryRecord; rerun: boolean }[];
  /** Saved question ids that did not come back: not in the store, or recorded against another database. */
  missing: string[];
}

/** Puts back the rows a turn showed when they fit the recorded result (same columns, same row count). */
function restoreRows(x: ExchangeView, shown: readonly ShownRows[]): void {
  for (const s of shown) {
    const e = x.turns.find((t) => t.index === s.index)?.exec;
    if (!e?.ok || e.rowCount !== s.rowCount || e.columns.length !== s.columns.length) continue;
    if (e.columns.some((c, i) => c !== s.columns[i])) continue;
    e.rows = s.rows;
  }
}

/** Appends the saved exchanges found in `records` (by id) to `state`, through the same reducer the live events use. */
export function rebuildConversation(
  state: AskState,
  saved: AskRestore['exchanges'],
  records: ReadonlyMap<string, TrajectoryRecord>,
  dbPath: string,
  storePath: string,
): Rebuilt {
  const out: Rebuilt = { exchanges: [], missing: [] };
  for (const x of saved) {
    const record = records.get(x.id);
    if (!record || record.task.db.path !== dbPath) {
      out.missing.push(x.id);
      continue;
    }
    const at = state.exchanges.length;
    for (const e of recordEvents(record)) applyEvent(state, at, e);
    applyEvent(state, at, { kind: 'saved', path: storePath });
    restoreRows(state.exchanges[at], x.rows);
    out.exchanges.push({ record, rerun: x.hadResult && record.finalSql !== null });
  }
  return out;
}
