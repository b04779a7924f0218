// One line per trajectory for lists (the replay view, labeling queues): what a reviewer filters and sorts on, small
// enough to send 10,000 of them to a webview at once. Pure and DOM/Node-free, so the host and webview apps can share
// it.
import type { TrajectoryRecord } from './types';
import type { ProtocolName } from '../agent/types';

export type Verdict = 'correct' | 'incorrect';
/** Where a summary's verdict came from: the record's own meta (a producer that already evaluated it) or our scoring. */
type VerdictSource = 'stored' | 'computed';

export interface TrajectorySummary {
  /** Position in the list it was built for (stable for the file's lifetime; messages refer to rows by it). */
  key: number;
  id: string;
  groupId: string;
  sample: number;
  /** 1-based line of the record in its file. */
  line: number;
  /** The question, cut to SUMMARY_TEXT_CHARS. */
  question: string;
  /** The final SQL on one line, cut to SUMMARY_TEXT_CHARS; null when the episode gave none. */
  finalSql: string | null;
  protocol: string;
  model: string;
  /** Database id when the task has one, else the file name of its path. */
  db: string;
  turns: number;
  /** Turns whose SQL failed to run. */
  errors: number;
  end: TrajectoryRecord['end'];
  hasGold: boolean;
  createdAt: string;
  verdict: Verdict | null;
  verdictSource: VerdictSource | null;
  /** Total of the reward panel chosen for the list; null until scored (or when it cannot be: no gold, no database). */
  reward: number | null;
  label: string | null;
}

/** Long enough to recognise a question in a list row; full text stays in the record. */
export const SUMMARY_TEXT_CHARS = 240;

function clip(s: string, n = SUMMARY_TEXT_CHARS): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length <= n ? one : one.slice(0, n - 1) + '…';
}

function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/** The database a record ran on, as lists show it. */
export function dbLabel(r: TrajectoryRecord): string {
  return r.task.db.id ?? baseName(r.task.db.path);
}

/**
 * A verdict a producer stored in `meta`: `correct` (boolean), `verdict` ('correct' | 'incorrect') or `ex` (1/0, as
 * benchmark rows write execution accuracy). Anything else means "not evaluated".
 */
export function storedVerdict(r: TrajectoryRecord): Verdict | null {
  const m = r.meta ?? {};
  if (typeof m.correct === 'boolean') return m.correct ? 'correct' : 'incorrect';
  if (m.verdict === 'correct' || m.verdict === 'incorrect') return m.verdict;
  if (m.ex === 1 || m.ex === 0) return m.ex === 1 ? 'correct' : 'incorrect';
  return null;
}

export function summarizeTrajectory(
  r: TrajectoryRecord,
  key: number,
  line: number,
  label: string | null = null,
): TrajectorySummary {
  const verdict = storedVerdict(r);
  let errors = 0;
  for (const t of r.turns) if (t.exec && !t.exec.ok) errors++;
  return {
    key,
    id: r.id,
    groupId: r.groupId,
    sample: r.sample,
    line,
    question: clip(r.task.question),
    finalSql: r.finalSql === null ? null : clip(r.finalSql),
    protocol: r.protocol.name,
    model: r.model.spec,
    db: dbLabel(r),
    turns: r.turns.length,
    errors,
    end: r.end,
    hasGold: r.task.gold !== null && r.task.gold.trim() !== '',
    createdAt: r.createdAt,
    verdict,
    verdictSource: verdict ? 'stored' : null,
    reward: null,
    label,
  };
}

/** Lower-cased text the free-text search looks in: the question, the evidence, every SQL the episode wrote. */
export function searchText(r: TrajectoryRecord): string {
  const parts = [r.id, r.task.question, r.task.evidence ?? '', r.finalSql ?? ''];
  for (const t of r.turns) if (t.action.sql && t.action.sql !== r.finalSql) parts.push(t.action.sql);
  return parts.join('\n').toLowerCase();
}

// ---------------------------------------------------------------------------------------------------------------
// Filtering

/** `unscored`: no verdict yet (or none possible). */
export type VerdictFilter = 'any' | 'correct' | 'incorrect' | 'unscored';

/** Empty strings and undefined mean "any". `label: NO_LABEL` keeps unlabelled trajectories only. */
export interface TrajectoryFilter {
  verdict?: VerdictFilter;
  protocol?: string;
  model?: string;
  db?: string;
  label?: string;
  turnsMin?: number | null;
  turnsMax?: number | null;
  rewardMin?: number | null;
  rewardMax?: number | null;
  /** Whitespace-separated words, all of which must occur (case-insensitive) in the question or SQL. */
  text?: string;
}

export const NO_LABEL = '(none)';

const set = (v: string | undefined): v is string => v !== undefined && v !== '';
const bound = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** A filter with its text split once, for filtering many summaries. */
function compileFilter(f: TrajectoryFilter): (s: TrajectorySummary, haystack?: string) => boolean {
  const words = (f.text ?? '')
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== '');
  const verdict = f.verdict ?? 'any';
  return (s, haystack) => {
    if (verdict === 'correct' || verdict === 'incorrect') {
      if (s.verdict !== verdict) return false;
    } else if (verdict === 'unscored' && s.verdict !== null) return false;
    if (set(f.protocol) && s.protocol !== f.protocol) return false;
    if (set(f.model) && s.model !== f.model) return false;
    if (set(f.db) && s.db !== f.db) return false;
    if (set(f.label) && (f.label === NO_LABEL ? s.label !== null : s.label !== f.label)) return false;
    if (bound(f.turnsMin) && s.turns < f.turnsMin) return false;
    if (bound(f.turnsMax) && s.turns > f.turnsMax) return false;
    if (bound(f.rewardMin) || bound(f.rewardMax)) {
      if (s.reward === null) return false;
      if (bound(f.rewardMin) && s.reward < f.rewardMin) return false;
      if (bound(f.rewardMax) && s.reward > f.rewardMax) return false;
    }
    if (words.length > 0) {
      const text = haystack ?? `${s.id}\n${s.question}\n${s.finalSql ?? ''}`.toLowerCase();
      for (const w of words) if (!text.includes(w)) return false;
    }
    return true;
  };
}

/**
 * Keys of the summaries the filter keeps, in list order. `haystacks[i]` (searchText of summary i's record) makes the
 * text search see the full question and every SQL, not just the clipped list text.
 */
export function filterSummaries(
  summaries: readonly TrajectorySummary[],
  f: TrajectoryFilter,
  haystacks?: readonly string[],
): number[] {
  const keep = compileFilter(f);
  const out: number[] = [];
  for (let i = 0; i < summaries.length; i++) if (keep(summaries[i], haystacks?.[i])) out.push(summaries[i].key);
  return out;
}

interface FacetValue {
  value: string;
  count: number;
}
export interface Facets {
  protocols: FacetValue[];
  models: FacetValue[];
  dbs: FacetValue[];
  labels: FacetValue[];
  turns: { min: number; max: number };
  verdicts: { correct: number; incorrect: number; unscored: number };
  /** Range of the rewards scored so far; null when none is. */
  reward: { min: number; max: number } | null;
}

function sortedCounts(m: Map<string, number>): FacetValue[] {
  return [...m]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
}

const bump = (m: Map<string, number>, v: string) => m.set(v, (m.get(v) ?? 0) + 1);

/** The values each filter can take, with counts, for the filter bar's dropdowns. One pass over the list. */
export function facets(summaries: readonly TrajectorySummary[]): Facets {
  let tMin = Infinity,
    tMax = -Infinity,
    rMin = Infinity,
    rMax = -Infinity;
  const verdicts = { correct: 0, incorrect: 0, unscored: 0 };
  const protocols = new Map<string, number>(),
    models = new Map<string, number>(),
    dbs = new Map<string, number>(),
    labels = new Map<string, number>();
  for (const s of summaries) {
    if (s.turns < tMin) tMin = s.turns;
    if (s.turns > tMax) tMax = s.turns;
    if (s.reward !== null) {
      if (s.reward < rMin) rMin = s.reward;
      if (s.reward > rMax) rMax = s.reward;
    }
    if (s.verdict === null) verdicts.unscored++;
    else verdicts[s.verdict]++;
    bump(protocols, s.protocol);
    bump(models, s.model);
    bump(dbs, s.db);
    bump(labels, s.label ?? NO_LABEL);
  }
  return {
    protocols: sortedCounts(protocols),
    models: sortedCounts(models),
    dbs: sortedCounts(dbs),
    labels: sortedCounts(labels),
    turns: summaries.length ? { min: tMin, max: tMax } : { min: 0, max: 0 },
    verdicts,
    reward: rMin <= rMax ? { min: rMin, max: rMax } : null,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Panels

const PANEL_OF_PROTOCOL: Record<ProtocolName, string> = {
  skyrl: 'skyrl',
  sqltrail: 'sqltrail',
  mtir: 'mtir',
  mtsqlr1: 'mtsqlr1',
  progress: 'progress',
};

/** The reward panel a protocol's paper trains with; `auto` in the replay view means this one per trajectory. */
export function defaultPanelFor(protocol: string): string {
  return (PANEL_OF_PROTOCOL as Record<string, string>)[protocol] ?? 'skyrl';
}

/** Members of each group (groupId → keys in sample order), for groups of two or more. */
export function groupKeys(summaries: readonly TrajectorySummary[]): Map<string, number[]> {
  const m = new Map<string, TrajectorySummary[]>();
  for (const s of summaries) {
    const g = m.get(s.groupId);
    if (g) g.push(s);
    else m.set(s.groupId, [s]);
  }
  const out = new Map<string, number[]>();
  for (const [id, members] of m) {
    if (members.length < 2) continue;
    out.set(
      id,
      members.sort((a, b) => a.sample - b.sample || a.key - b.key).map((s) => s.key),
    );
  }
  return out;
}
