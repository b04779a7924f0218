// Query history per database: the last 200 statements run from SQL documents, newest first, kept across restarts
// (VS Code's global state), so any of them can be run again from a list.
import type * as vscode from 'vscode';
import { rowsText } from '../../core/util/countText';

const KEY = 'quarry.sql.history';
export const HISTORY_LIMIT = 200;

export interface HistoryEntry {
  sql: string;
  /** ISO time it ran. */
  at: string;
  ok: boolean;
  /** Rows of the whole result (null when unknown or failed). */
  rows: number | null;
}

export class QueryHistory {
  constructor(private readonly state: vscode.Memento) {}

  private all(): Record<string, HistoryEntry[]> {
    return this.state.get<Record<string, HistoryEntry[]>>(KEY) ?? {};
  }

  /** Newest first. */
  list(db: string): HistoryEntry[] {
    return this.all()[db] ?? [];
  }

  /** Databases with a history, most recently used first. */
  databases(): string[] {
    const all = this.all();
    return Object.keys(all).sort((a, b) => (all[b][0]?.at ?? '').localeCompare(all[a][0]?.at ?? ''));
  }

  async add(db: string, entry: HistoryEntry): Promise<void> {
    const all = this.all();
    // A statement run again moves to the top instead of filling the list with copies.
    const rest = (all[db] ?? []).filter((e) => e.sql !== entry.sql);
    await this.state.update(KEY, { ...all, [db]: [entry, ...rest].slice(0, HISTORY_LIMIT) });
  }
}

/** How a history entry reads in the list: "50,000 rows · <when>" (counts written as the grid writes them). */
export function historyDescription(e: HistoryEntry, when: (iso: string) => string): string {
  return `${e.ok ? rowsText(e.rows) : 'failed'} · ${when(e.at)}`;
}
