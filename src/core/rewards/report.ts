// Run-level reward diagnostics: what the editor's diagnostics view charts for a scored trajectory file. Everything is
// plain JSON-safe data derived from a RunReport (scoreRun) and the records it scored: histograms of reward and turns,
// execution accuracy by hardness, mean contribution per term, integrity flags with the items behind them, GRPO
// group statistics (zero-variance groups, the spread of advantages), and Progress-SQL's Table 8 ODT mismatch rates.
import type { TrajectoryRecord } from '../trajectories/types';
import { spiderHardness, type Hardness } from '../sql/hardness';
import { loadSpiderSchema } from '../sql/spider/schema';
import { integrityFlagItems, type IntegrityFlag } from './integrity';
import { mean } from './group';
import type { RunReport, TermSummary } from './scoreRun';
import type { ScoringResources } from './types';
import type { MismatchReport } from './mismatch';
import type { OdtTag } from './odt';
import { maxOf, minOf } from '../util/extent';

export const HARDNESS_ORDER: readonly Hardness[] = ['easy', 'medium', 'hard', 'extra'];

export interface HistogramBin {
  /** Inclusive lower edge. */
  lo: number;
  /** Exclusive upper edge (inclusive for the last bin). */
  hi: number;
  count: number;
}

export interface Histogram {
  bins: HistogramBin[];
  /** Values counted (finite ones only). */
  n: number;
  min: number | null;
  max: number | null;
  mean: number | null;
}

export interface HistogramOptions {
  /** Number of equal-width bins for continuous values (default 10). */
  bins?: number;
  /** Integer values (turn counts): one bin per integer from min to max, unless that is more than `bins` · 3. */
  integer?: boolean;
}

/**
 * Equal-width bins over [min, max]; values that agree to three significant digits make one bin [min, max]. Integer
 * data gets one bin per value, so a histogram of turns reads 1, 2, 3… rather than 1.0–1.4. Non-finite values are
 * left out.
 */
export function histogram(values: readonly number[], opts: HistogramOptions = {}): Histogram {
  const xs = values.filter((v) => Number.isFinite(v));
  if (xs.length === 0) return { bins: [], n: 0, min: null, max: null, mean: null };
  let min = Infinity,
    max = -Infinity;
  for (const x of xs) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const stats = { n: xs.length, min, max, mean: mean(xs) };
  // Bins are never narrower than three significant digits of the data's scale: advantage spreads of two-sample
  // groups are all √2 but for GRPO's ε in the denominator, and bins 1e-7 wide would only draw that noise.
  const resolution = 1e-3 * Math.max(1, Math.abs(min), Math.abs(max));
  if (max - min < resolution) return { bins: [{ lo: min, hi: max, count: xs.length }], ...stats };
  let want = Math.max(1, Math.floor(opts.bins ?? 10));
  if (opts.integer && xs.every(Number.isInteger) && max - min + 1 <= want * 3) {
    const bins: HistogramBin[] = [];
    for (let v = min; v <= max; v++) bins.push({ lo: v, hi: v, count: 0 });
    for (const x of xs) bins[x - min].count++;
    return { bins, ...stats };
  }
  want = Math.min(want, Math.ceil((max - min) / resolution));
  const width = (max - min) / want;
  const bins: HistogramBin[] = Array.from({ length: want }, (_, i) => ({
    lo: min + i * width,
    hi: i === want - 1 ? max : min + (i + 1) * width,
    count: 0,
  }));
  for (const x of xs) bins[Math.min(want - 1, Math.floor((x - min) / width))].count++;
  return { bins, ...stats };
}

/**
 * Spider hardness of a record: its task's difficulty, else computed from the gold with the schema read from the
 * database (memoised under the same key the reward engine uses, so a scored run does not parse the gold twice).
 */
export function recordHardness(record: TrajectoryRecord, dbPath: string, resources: ScoringResources): Hardness | null {
  if (record.task.difficulty) return record.task.difficulty;
  const gold = record.task.gold;
  if (!gold) return null;
  return resources.memo('goldHardness', dbPath + '\0' + gold, () => {
    try {
      return spiderHardness(gold, loadSpiderSchema(dbPath)).hardness;
    } catch {
      return null;
    }
  });
}

export interface HardnessRow {
  hardness: Hardness | 'unknown';
  count: number;
  correct: number;
  /** correct / count; null when the level has no items. */
  ex: number | null;
}

/** One scored trajectory, as the run view lists it (and links flags to). */
export interface RunItem {
  id: string;
  groupId: string;
  sample: number;
  question: string;
  total: number;
  correct: boolean;
  reason: string;
  turns: number;
  hardness: Hardness | null;
  advantage: number | null;
  /** ODT tags of the final SQL against the gold; null when the ODT could not compare them. */
  odtTags: OdtTag[] | null;
}

export interface GroupDiagnostics {
  /** Groups with at least two samples. */
  count: number;
  zeroVariance: number;
  /** zeroVariance / count. */
  zeroVarianceShare: number;
  zeroVarianceIds: string[];
  /** Advantages of every sample in a multi-sample group. */
  advantages: Histogram;
  /** Per group, the largest minus the smallest advantage (0 for a zero-variance group). */
  spread: Histogram;
  /** Mean pass@G over the groups. */
  meanPass: number;
  solvedByAll: number;
  solvedByNone: number;
}

export interface RunDiagnostics {
  panel: string;
  scored: number;
  skipped: Array<{ id: string; reason: string }>;
  total: RunReport['total'];
  /** Share of scored trajectories whose final SQL is execution-correct. */
  ex: number;
  reward: Histogram;
  turns: Histogram;
  byHardness: HardnessRow[];
  terms: TermSummary[];
  flags: IntegrityFlag[];
  groups: GroupDiagnostics | null;
  /** Progress-SQL Table 8: ODT tag and category rates over the run. */
  mismatch: MismatchReport;
  items: RunItem[];
}

export interface RunDiagnosticsOptions {
  /** Database of a record (default its task.db.path); used to compute hardness when the task has none. */
  dbPathOf?: (r: TrajectoryRecord) => string;
  bins?: number;
}

export function runDiagnostics(
  report: RunReport,
  records: readonly TrajectoryRecord[],
  resources: ScoringResources,
  opts: RunDiagnosticsOptions = {},
): RunDiagnostics {
  const byId = new Map(records.map((r) => [r.id, r]));
  const dbPathOf = opts.dbPathOf ?? ((r: TrajectoryRecord) => r.task.db.path);
  const items: RunItem[] = report.scored.map((s) => {
    const rec = byId.get(s.id);
    return {
      id: s.id,
      groupId: s.groupId,
      sample: s.sample,
      question: rec?.task.question ?? '',
      total: s.result.total,
      correct: s.verdict.correct,
      reason: s.verdict.reason,
      turns: rec?.turns.length ?? 0,
      hardness: rec ? recordHardness(rec, dbPathOf(rec), resources) : null,
      advantage: s.advantage,
      odtTags: s.odt.status === 'compared' ? s.odt.tags : null,
    };
  });

  const levels: Array<Hardness | 'unknown'> = [...HARDNESS_ORDER, 'unknown'];
  const byHardness: HardnessRow[] = levels
    .map((h) => {
      const at = items.filter((it) => (it.hardness ?? 'unknown') === h);
      const correct = at.filter((it) => it.correct).length;
      return { hardness: h, count: at.length, correct, ex: at.length ? correct / at.length : null };
    })
    .filter((row) => row.count > 0 || row.hardness !== 'unknown');

  return {
    panel: report.panel,
    scored: report.scored.length,
    skipped: report.skipped,
    total: report.total,
    ex: items.length ? items.filter((it) => it.correct).length / items.length : 0,
    reward: histogram(
      items.map((it) => it.total),
      { bins: opts.bins },
    ),
    turns: histogram(
      items.map((it) => it.turns),
      { bins: opts.bins, integer: true },
    ),
    byHardness,
    terms: report.terms,
    flags: integrityFlagItems(report.integrity),
    groups: groupDiagnostics(report, items, opts.bins),
    mismatch: report.mismatch,
    items,
  };
}

function groupDiagnostics(report: RunReport, items: readonly RunItem[], bins?: number): GroupDiagnostics | null {
  const g = report.groups;
  if (!g || g.groups.length === 0) return null;
  const members = new Map<string, number[]>();
  for (const it of items) {
    if (it.advantage === null) continue;
    members.set(it.groupId, [...(members.get(it.groupId) ?? []), it.advantage]);
  }
  const spreads = [...members.values()].map((a) => maxOf(a) - minOf(a));
  return {
    count: g.groups.length,
    zeroVariance: g.zeroVariance.length,
    zeroVarianceShare: g.zeroVariance.length / g.groups.length,
    zeroVarianceIds: g.zeroVariance,
    advantages: histogram([...members.values()].flat(), { bins }),
    spread: histogram(spreads, { bins }),
    meanPass: mean(g.groups.map((x) => x.pass)),
    solvedByAll: g.groups.filter((x) => x.pass === 1).length,
    solvedByNone: g.groups.filter((x) => x.pass === 0).length,
  };
}
