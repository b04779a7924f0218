// The replay app's state, all in one object: `app` is what survives hide/show and a window reload (host.saveState);
// the rest is what the host sent this session (the rows, the keys the filter keeps, the open trajectory, comparison or
// group) and where the list cursor is. Every view gets it through its ReplayContext; the views keep only timers.
import type {
  DiffPart,
  Explanation,
  Facets,
  GroupMember,
  GroupStatistics,
  InvalidLine,
  ListRow,
  ReplayAppState,
} from '../../src/protocol/replay';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import type { ScoringState } from './scoreText';

interface Opened {
  key: number;
  record: TrajectoryRecord;
}

export interface DetailData extends Opened {
  explanation: Explanation | null;
  explainError: string | null;
}

export interface CompareData {
  a: Opened;
  b: Opened;
  diff: DiffPart[];
}

export interface GroupData {
  groupId: string;
  panel: string;
  members: GroupMember[];
  stats: GroupStatistics;
}

export interface ReplayState {
  /** Saved with host.saveState: file, filter, selection, marks, view, turn, list scroll. */
  app: ReplayAppState;
  /** Every row of the file, by key. */
  summaries: ListRow[];
  /** The keys the current filter keeps, in list order. */
  keys: number[];
  total: number;
  facets: Facets | null;
  /** Reward panels offered, and the one in use. */
  panels: string[];
  panelName: string;
  invalid: InvalidLine[];
  truncated: string | null;
  /** Number of the last filter sent; older answers are dropped. */
  seq: number;
  /** Index into `keys`; -1 when nothing is selected. */
  cursor: number;
  scoring: ScoringState;
  detail: DetailData | null;
  compare: CompareData | null;
  group: GroupData | null;
  /** The selection (and view) saved before the panel was hidden waits for the list to come back. */
  restorePending: boolean;
  /** The turn to show when a restored trajectory arrives (the panel was hidden on it). */
  restoreTurn: number | null;
  /** The notice line: a hint or an error. */
  message: { text: string; error: boolean } | null;
}

export function initialState(saved: ReplayAppState | undefined): ReplayState {
  return {
    app: saved ?? { file: null, filter: {}, selectedId: null, markedIds: [], view: 'detail', turn: 0, scrollTop: 0 },
    summaries: [],
    keys: [],
    total: 0,
    facets: null,
    panels: ['auto'],
    panelName: 'auto',
    invalid: [],
    truncated: null,
    seq: 0,
    cursor: -1,
    scoring: { done: 0, total: 0, running: false, scored: 0, unscored: null },
    detail: null,
    compare: null,
    group: null,
    restorePending: saved !== undefined && saved.selectedId !== null,
    restoreTurn: null,
    message: null,
  };
}

export function keyOfId(state: ReplayState, id: string): number | undefined {
  return state.summaries.find((s) => s.id === id)?.key;
}

/** The row under the list cursor. */
export function cursorRow(state: ReplayState): ListRow | undefined {
  return state.cursor >= 0 ? state.summaries[state.keys[state.cursor]] : undefined;
}
