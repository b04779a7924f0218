// The labeling panel's message protocol, shared by the extension host (src/extension/labeling) and the webview app
// (webview/labeling/main.ts). The host owns the queue (a trajectory file in review order), the label store and the
// sandbox; the app shows one trajectory at a time and sends what the reviewer did. Nothing here imports `vscode` or
// the DOM.
import { checkMessage, type MessageRules } from './validate';
import { GRID_RULES, gridMessageProblem, type GridToApp, type GridToHost } from './grid';
import type { TrajectoryRecord } from '../core/trajectories/types';
import type { Label, Verdict } from '../core/labels/types';
import type { TagInfo } from '../core/labels/store';

export type { Label, Verdict, TagInfo, TrajectoryRecord };

import type { QueueFilter } from '../core/labels/queue';

export type { QueueFilter };
export const QUEUE_FILTERS: readonly { value: QueueFilter; label: string }[] = [
  { value: 'unlabeled-first', label: 'Unlabeled first' },
  { value: 'unlabeled', label: 'Unlabeled only' },
  { value: 'labeled', label: 'Labeled only' },
  { value: 'incorrect', label: 'Labeled incorrect' },
  { value: 'unsure', label: 'Labeled unsure' },
  { value: 'all', label: 'All, in file order' },
];

/** Longest corrected SQL / note / tag list the host accepts from the app. */
export const LIMITS = { sqlChars: 100_000, noteChars: 20_000, tags: 50, tagChars: 40 } as const;

export interface QueueInfo {
  file: string;
  fileLabel: string;
  filter: QueueFilter;
  /** Trajectories in the queue. */
  size: number;
  /** Trajectories in the file / with a verdict among them. */
  total: number;
  labeled: number;
  /** Lines of the file that could not be read, in words (the first few). */
  problems: string[];
}

/**
 * A corrected SQL's run: the match verdict (decided on the whole result) and its shape. The rows themselves come a
 * page at a time through the paged grid (`grid` messages, answered by a GridSession over the whole result).
 */
export interface RunOutcome {
  columns: string[];
  /** Rows of the whole result, as the check ran it. */
  rowCount: number;
  error: string | null;
  against: 'gold' | 'final' | 'none';
  match: boolean | null;
  reason: string | null;
  detail: string | null;
  ms: number;
}

export type ToApp =
  | { type: 'loading'; file: string }
  | { type: 'queue'; queue: QueueInfo }
  | { type: 'item'; position: number; record: TrajectoryRecord; label: Label | null; changed: boolean }
  | { type: 'empty'; reason: string }
  | { type: 'tags'; tags: TagInfo[] }
  | { type: 'saved'; seq: number; id: string; label: Label; labeled: number; total: number }
  | { type: 'saveFailed'; seq: number; id: string; message: string }
  /**
   * Run `seq`'s outcome; `restored` when the host sends the newest run again to a webview that reloaded (the panel was
   * hidden and shown again): the app shows it without having asked, and its grid pages the same result.
   */
  | { type: 'runResult'; seq: number; id: string; outcome: RunOutcome; restored?: boolean }
  | { type: 'runFailed'; seq: number; id: string; message: string }
  /** The paged grid of run `seq`'s result: a page, a page error, export progress. */
  | { type: 'grid'; seq: number; id: string; message: GridToApp }
  | { type: 'error'; message: string };

export type ToHost =
  /** The app (re)loaded; `position`/`id` are where it was before being hidden. */
  | { type: 'ready'; position?: number; id?: string }
  | { type: 'go'; position: number }
  | { type: 'setFilter'; filter: string }
  /** verdict '' means none. */
  | { type: 'save'; seq: number; id: string; verdict: string; correctedSql: string; tags: string[]; note: string }
  | { type: 'run'; seq: number; id: string; sql: string }
  /**
   * The grid of run `seq`'s result asks for a page, an export or a copy (a GridToHost message, checked with
   * GRID_RULES; the whole result is paged, sorted and filtered in SQLite).
   */
  | { type: 'grid'; seq: number; id: string; message: Record<string, unknown> }
  | { type: 'addTag'; name: string }
  | { type: 'openReplay'; id: string }
  | { type: 'exportSft' }
  | { type: 'exportRl' };

export const LABEL_RULES: MessageRules<ToHost> = {
  ready: { position: 'number?', id: 'string?' },
  go: { position: 'number' },
  setFilter: { filter: 'string' },
  save: { seq: 'number', id: 'string', verdict: 'string', correctedSql: 'string', tags: 'array', note: 'string' },
  run: { seq: 'number', id: 'string', sql: 'string' },
  grid: { seq: 'number', id: 'string', message: 'object' },
  addTag: { name: 'string' },
  openReplay: { id: 'string' },
  exportSft: {},
  exportRl: {},
};

/** What checkMessage's field types cannot say: values and sizes. Returns the problem in words, or null. */
export function labelMessageProblem(m: ToHost): string | null {
  switch (m.type) {
    case 'go':
      return Number.isInteger(m.position) && m.position >= 0 ? null : 'go: position must be a whole number ≥ 0';
    case 'ready':
      return m.position === undefined || (Number.isInteger(m.position) && m.position >= 0)
        ? null
        : 'ready: position must be a whole number ≥ 0';
    case 'setFilter':
      return QUEUE_FILTERS.some((f) => f.value === m.filter)
        ? null
        : `setFilter: unknown filter ${JSON.stringify(m.filter)}`;
    case 'save':
      if (m.verdict !== '' && m.verdict !== 'correct' && m.verdict !== 'incorrect' && m.verdict !== 'unsure')
        return `save: unknown verdict ${JSON.stringify(m.verdict)}`;
      if (m.correctedSql.length > LIMITS.sqlChars)
        return `save: corrected SQL longer than ${LIMITS.sqlChars} characters`;
      if (m.note.length > LIMITS.noteChars) return `save: note longer than ${LIMITS.noteChars} characters`;
      if (m.tags.length > LIMITS.tags) return `save: more than ${LIMITS.tags} tags`;
      if (!m.tags.every((t) => typeof t === 'string' && t.trim() !== '' && t.length <= LIMITS.tagChars))
        return `save: every tag must be a non-empty string of at most ${LIMITS.tagChars} characters`;
      return m.id === '' ? 'save: empty trajectory id' : null;
    case 'run':
      if (m.sql.length > LIMITS.sqlChars) return `run: SQL longer than ${LIMITS.sqlChars} characters`;
      return m.sql.trim() === '' ? 'run: there is no SQL to run' : null;
    case 'grid': {
      const inner = checkMessage<GridToHost>(m.message, GRID_RULES);
      const problem = inner.ok ? gridMessageProblem(inner.message) : inner.error;
      return problem === null ? null : `grid: ${problem}`;
    }
    case 'addTag':
      return m.name.trim() !== '' && m.name.length <= LIMITS.tagChars
        ? null
        : `addTag: a tag must be 1–${LIMITS.tagChars} characters`;
    default:
      return null;
  }
}

/**
 * What the app keeps across hide/show (VS Code's webview state): where it was and the reviewer's unsaved edits; the
 * file and filter let the host bring the queue back after a window reload (src/protocol/restore.ts).
 */
export interface LabelAppState {
  file?: string | null;
  filter?: QueueFilter;
  position: number;
  id: string | null;
  draft: {
    id: string;
    verdict: Verdict | '';
    correctedSql: string;
    tags: string[];
    note: string;
    dirty: boolean;
  } | null;
  showHelp: boolean;
}

/** The keyboard shortcuts, shown by `?` and in docs/editor.md. */
export const SHORTCUTS: readonly [keys: string, what: string][] = [
  ['j / n / ↓', 'next trajectory'],
  ['k / p / ↑', 'previous trajectory'],
  ['1 / 2 / 3', 'verdict correct / incorrect / unsure (saves, then the next)'],
  ['e', 'edit the corrected SQL'],
  ['Ctrl+Enter', 'run the corrected SQL (in the SQL editor)'],
  ['t', 'focus the tags (Space toggles, a adds a tag)'],
  ['s', 'save'],
  ['Escape', 'leave a text field (back to the shortcuts)'],
  ['?', 'show or hide the shortcuts'],
];
