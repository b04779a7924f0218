// The replay panel's message protocol, shared by the extension host (src/extension/replay) and the webview app
// (webview/replay/main.ts). The host reads the file, keeps every record and filters; the app gets one summary per
// trajectory, the keys the current filter keeps, and a full record only when one is opened. Nothing here imports
// `vscode` or the DOM.
import type { MessageRules } from './validate';
import type { Facets, TrajectoryFilter, TrajectorySummary, Verdict, VerdictFilter } from '../core/trajectories/summary';
import type { TrajectoryRecord } from '../core/trajectories/types';
import type { DiffPart } from '../core/trajectories/compare';
import type { GroupStatistics } from '../core/trajectories/scoring';
import type { Term } from '../core/rewards/types';

export type { Facets, TrajectoryFilter, DiffPart, GroupStatistics };

/** What a list row shows of one trajectory (the app's side of a TrajectorySummary). */
export type ListRow = Pick<
  TrajectorySummary,
  | 'key'
  | 'id'
  | 'groupId'
  | 'sample'
  | 'line'
  | 'question'
  | 'protocol'
  | 'model'
  | 'db'
  | 'turns'
  | 'errors'
  | 'end'
  | 'verdict'
  | 'verdictSource'
  | 'reward'
  | 'label'
>;

/**
 * Every row of the list in one message, by column: repeated strings (group ids, protocols, models, databases, labels,
 * ends) are indices into `strings`, so 10,000 rows are a few hundred KiB instead of megabytes of repeated keys.
 */
interface PackedRows {
  strings: string[];
  id: string[];
  question: string[];
  groupId: number[];
  sample: number[];
  line: number[];
  protocol: number[];
  model: number[];
  db: number[];
  /** -1: no label. */
  label: number[];
  turns: number[];
  errors: number[];
  end: number[];
  /** 0 not scored, 1 correct, 2 incorrect; +2 when the verdict was computed here rather than stored (3, 4). */
  verdict: number[];
  reward: (number | null)[];
}

/** A list row's question is cut shorter than the summary's: the row is one line wide. */
export const ROW_QUESTION_CHARS = 160;

export function packRows(list: readonly TrajectorySummary[]): PackedRows {
  const index = new Map<string, number>();
  const strings: string[] = [];
  const ref = (v: string) => {
    let i = index.get(v);
    if (i === undefined) {
      i = strings.length;
      strings.push(v);
      index.set(v, i);
    }
    return i;
  };
  const p: PackedRows = {
    strings,
    id: [],
    question: [],
    groupId: [],
    sample: [],
    line: [],
    protocol: [],
    model: [],
    db: [],
    label: [],
    turns: [],
    errors: [],
    end: [],
    verdict: [],
    reward: [],
  };
  for (const s of list) {
    p.id.push(s.id);
    p.question.push(
      s.question.length > ROW_QUESTION_CHARS ? s.question.slice(0, ROW_QUESTION_CHARS - 1) + '…' : s.question,
    );
    p.groupId.push(ref(s.groupId));
    p.sample.push(s.sample);
    p.line.push(s.line);
    p.protocol.push(ref(s.protocol));
    p.model.push(ref(s.model));
    p.db.push(ref(s.db));
    p.label.push(s.label === null ? -1 : ref(s.label));
    p.turns.push(s.turns);
    p.errors.push(s.errors);
    p.end.push(ref(s.end));
    p.verdict.push(verdictCode(s.verdict, s.verdictSource));
    p.reward.push(s.reward);
  }
  return p;
}

function verdictCode(v: Verdict | null, source: TrajectorySummary['verdictSource']): number {
  if (v === null) return 0;
  return (v === 'correct' ? 1 : 2) + (source === 'computed' ? 2 : 0);
}

/** Rows in list order; row i has key i (the host's summaries are keyed by position). */
export function unpackRows(p: PackedRows): ListRow[] {
  const rows: ListRow[] = new Array(p.id.length);
  for (let i = 0; i < p.id.length; i++) {
    const v = p.verdict[i];
    rows[i] = {
      key: i,
      id: p.id[i],
      question: p.question[i],
      groupId: p.strings[p.groupId[i]],
      sample: p.sample[i],
      line: p.line[i],
      protocol: p.strings[p.protocol[i]],
      model: p.strings[p.model[i]],
      db: p.strings[p.db[i]],
      label: p.label[i] < 0 ? null : p.strings[p.label[i]],
      turns: p.turns[i],
      errors: p.errors[i],
      end: p.strings[p.end[i]] as ListRow['end'],
      verdict: v === 0 ? null : v % 2 === 1 ? 'correct' : 'incorrect',
      verdictSource: v === 0 ? null : v > 2 ? 'computed' : 'stored',
      reward: p.reward[i],
    };
  }
  return rows;
}

/** A bad line of the file, as the validating reader reported it. */
export interface InvalidLine {
  line: number | null;
  message: string;
}

/** One trajectory's panel breakdown, or why there is none. */
export interface Explanation {
  panel: string;
  total: number;
  terms: Term[];
  correct: boolean;
  /** `match`, or why not (`pred-error`, `row-mismatch`…). */
  reason: string;
  detail: string | null;
}

export interface ScoreUpdate {
  key: number;
  verdict: Verdict | null;
  reward: number | null;
  note: string | null;
}

export interface GroupMember {
  key: number;
  record: TrajectoryRecord;
  explanation: Explanation | null;
  /** Why there is no explanation (no gold, no database…). */
  unscored: string | null;
  advantage: number | null;
}

/** Host → app. */
export type ToApp =
  | { type: 'loading'; file: string; label: string }
  | {
      type: 'list';
      file: string;
      label: string;
      rows: PackedRows;
      invalid: InvalidLine[];
      /** The unfinished last line a killed writer left, in words; null when the file ends cleanly. */
      truncated: string | null;
      panels: string[];
      panel: string;
    }
  | { type: 'view'; seq: number; keys: number[]; total: number; facets: Facets }
  | {
      type: 'scores';
      updates: ScoreUpdate[];
      /** Records looked at (scored, or skipped with a reason), of `total`. */
      done: number;
      total: number;
      running: boolean;
      /** Of `done`, those that got a reward; the others were skipped. */
      scored?: number;
      /** Why the skipped ones were not scored (the most common reason), or null. */
      unscored?: string | null;
    }
  | { type: 'detail'; key: number; record: TrajectoryRecord; turn: number | null }
  | { type: 'explanation'; key: number; explanation: Explanation | null; error: string | null }
  | {
      type: 'compare';
      a: { key: number; record: TrajectoryRecord };
      b: { key: number; record: TrajectoryRecord };
      diff: DiffPart[];
      /** Switch to the compare view with these two marked (the host opened a pair, e.g. from Compare Checkpoints). */
      show?: boolean;
    }
  | { type: 'group'; groupId: string; panel: string; members: GroupMember[]; stats: GroupStatistics }
  | { type: 'error'; message: string }
  | { type: 'empty'; message: string };

/** App → host. */
export type ToHost =
  | { type: 'ready' }
  | { type: 'pickSource' }
  | { type: 'openFile' }
  | { type: 'filter'; seq: number; filter: Record<string, unknown> }
  | { type: 'select'; key: number }
  | { type: 'compare'; a: number; b: number }
  | { type: 'group'; key: number }
  | { type: 'setPanel'; panel: string }
  | { type: 'score' }
  | { type: 'stopScoring' }
  | { type: 'openSql'; sql: string };

export const REPLAY_RULES: MessageRules<ToHost> = {
  ready: {},
  pickSource: {},
  openFile: {},
  filter: { seq: 'number', filter: 'object' },
  select: { key: 'number' },
  compare: { a: 'number', b: 'number' },
  group: { key: 'number' },
  setPanel: { panel: 'string' },
  score: {},
  stopScoring: {},
  openSql: { sql: 'string' },
};

const VERDICTS: readonly VerdictFilter[] = ['any', 'correct', 'incorrect', 'unscored'];

/**
 * The filter a webview sent, with every field checked: wrong types are dropped (meaning "any"), text is capped.
 * Returns the clean filter and the fields it dropped, so the host can say what it ignored.
 */
export function sanitizeFilter(raw: Record<string, unknown>): { filter: TrajectoryFilter; dropped: string[] } {
  const filter: TrajectoryFilter = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined || v === null) continue;
    switch (k) {
      case 'verdict':
        if (typeof v === 'string' && (VERDICTS as readonly string[]).includes(v)) filter.verdict = v as VerdictFilter;
        else dropped.push(k);
        break;
      case 'protocol':
      case 'model':
      case 'db':
      case 'label':
      case 'text':
        if (typeof v === 'string') filter[k] = v.slice(0, 1000);
        else dropped.push(k);
        break;
      case 'turnsMin':
      case 'turnsMax':
      case 'rewardMin':
      case 'rewardMax':
        if (typeof v === 'number' && Number.isFinite(v)) filter[k] = v;
        else dropped.push(k);
        break;
      default:
        dropped.push(k);
    }
  }
  return { filter, dropped };
}

/** What the app keeps across hide/show (host.saveState). */
export interface ReplayAppState {
  file: string | null;
  filter: TrajectoryFilter;
  /** Selected and compare-marked trajectories by id (keys change when the file is reread). */
  selectedId: string | null;
  markedIds: string[];
  view: 'detail' | 'compare' | 'group';
  turn: number;
  scrollTop: number;
}
