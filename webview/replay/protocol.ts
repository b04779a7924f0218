// The replay panel's message protocol, shared by the extension host (src/extension/replay) and the webview app
// (webview/replay/main.ts). The host reads the file, keeps every record and filters; the app gets one summary per
// trajectory, the keys the current filter keeps, and a full record only when one is opened. Nothing here imports
// `vscode` or the DOM.
import type { MessageRules } from '../../src/extension/webviews/validate';
import type { Facets, TrajectoryFilter, TrajectorySummary, Verdict, VerdictFilter } from '../../src/core/trajectories/summary';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import type { DiffPart } from '../../src/core/trajectories/index-compare';
import type { GroupStatistics } from '../../src/core/trajectories/index-scoring';
import type { Term } from '../../src/core/rewards/types';

export type { Facets, TrajectoryFilter, TrajectorySummary, Verdict, DiffPart, GroupStatistics, Term };

/** A bad line of the file, as the validating reader reported it. */
export interface InvalidLine { line: number | null; message: string }

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

export interface ScoreUpdate { key: number; verdict: Verdict | null; reward: number | null; note: string | null }

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
    type: 'list'; file: string; label: string; summaries: TrajectorySummary[]; invalid: InvalidLine[];
    /** The unfinished last line a killed writer left, in words; null when the file ends cleanly. */
    truncated: string | null; panels: string[]; panel: string;
  }
  | { type: 'view'; seq: number; keys: number[]; total: number; facets: Facets }
  | { type: 'scores'; updates: ScoreUpdate[]; done: number; total: number; running: boolean }
  | { type: 'detail'; key: number; record: TrajectoryRecord; turn: number | null }
  | { type: 'explanation'; key: number; explanation: Explanation | null; error: string | null }
  | { type: 'compare'; a: { key: number; record: TrajectoryRecord }; b: { key: number; record: TrajectoryRecord }; diff: DiffPart[] }
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
        if (typeof v === 'string' && (VERDICTS as readonly string[]).includes(v)) filter.verdict = v as VerdictFilter; else dropped.push(k);
        break;
      case 'protocol': case 'model': case 'db': case 'label': case 'text':
        if (typeof v === 'string') filter[k] = v.slice(0, 1000); else dropped.push(k);
        break;
      case 'turnsMin': case 'turnsMax': case 'rewardMin': case 'rewardMax':
        if (typeof v === 'number' && Number.isFinite(v)) filter[k] = v; else dropped.push(k);
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
