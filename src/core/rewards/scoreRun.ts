// Scores a whole set of trajectories with one panel: per-trajectory breakdowns, a summary per term, the integrity
// report, GRPO group statistics for samples that share a question (groupId), and Progress-SQL's Table 8 ODT mismatch
// rates (mismatch.ts).
import type { TrajectoryRecord } from '../trajectories/types';
import type { EvalModeName } from '../eval/modes';
import { scorePanelDetailed, buildContext, inputSuite } from './engine';
import type { TestSuite } from './testSuite';
import { checkFormat, type FormatCheck } from './format';
import { checkIntegrity, type IntegrityReport } from './integrity';
import {
  groupAdvantages,
  isZeroVariance,
  mean,
  passAtG,
  rankHardButSolvable,
  filterTrajectories,
  standardDeviation,
  type RankedQuestion,
} from './group';
import type { DetailedPanelResult, ExecOutcome, ResolvedPanel, ScoringResources } from './types';
import { maxOf, minOf } from '../util/extent';
import { isGreedy, recordsMismatch, type MismatchReport, type MismatchSql, type OdtOutcome } from './mismatch';

export interface ScoredTrajectory {
  id: string;
  groupId: string;
  sample: number;
  result: DetailedPanelResult;
  verdict: ExecOutcome;
  format: FormatCheck;
  /** Group-normalised advantage of `result.total`; null when the trajectory is alone in its group. */
  advantage: number | null;
  /** The ODT tags of the compared SQL (RunOptions.mismatchSql) against the gold, or why there are none. */
  odt: OdtOutcome;
  /** Decoded at temperature 0 (null: the record does not say). */
  greedy: boolean | null;
}

export interface RunOptions {
  resources: ScoringResources;
  mode?: EvalModeName;
  /** Database of a record (default: its task.db.path). */
  dbPathOf?: (r: TrajectoryRecord) => string;
  /** Scorings in flight at once (execution is the slow part; the pool runs them in parallel). Default 16. */
  concurrency?: number;
  /** Called after each scored trajectory (done of total), e.g. for a progress bar. */
  onProgress?: (done: number, total: number) => void;
  /** Stops scoring: no new trajectory starts once aborted, and scoreRun rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Which SQL of each trajectory the ODT mismatch report compares (default `final`). */
  mismatchSql?: MismatchSql;
  /** A test suite for the execution terms (each record's folder named by task.db.id, else its database's name). */
  testSuite?: TestSuite | null;
}

export interface TermSummary {
  name: string;
  weight: number;
  meanValue: number;
  meanContribution: number;
  min: number;
  max: number;
  /** Share of trajectories where the term's value is not 0. */
  nonzero: number;
}

export interface GroupSummary {
  groupId: string;
  size: number;
  meanReward: number;
  stdReward: number;
  correct: number;
  pass: number;
  zeroVariance: boolean;
}

export interface GroupStats {
  /** Groups with at least two samples. */
  groups: GroupSummary[];
  zeroVariance: string[];
  /** SQL-Trail's S(q) ranking (ascending), hard-but-solvable first. */
  ranking: RankedQuestion[];
  /** MTIR-SQL's filter with F = the mtir format reward (0.1 well-formed, −0.1 not) and τ = 0. */
  mtirFilter: { kept: number; dropped: string[] };
}

export interface RunReport {
  panel: string;
  scored: ScoredTrajectory[];
  skipped: Array<{ id: string; reason: string }>;
  total: { mean: number; min: number; max: number };
  terms: TermSummary[];
  integrity: IntegrityReport;
  groups: GroupStats | null;
  /** Progress-SQL Table 8: how often each ODT tag and tag category fires over the run. */
  mismatch: MismatchReport;
}

async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return out;
}

/** The scoring input of one record of a run. */
export function runInput(
  record: TrajectoryRecord,
  panel: ResolvedPanel,
  opts: Pick<RunOptions, 'mode' | 'dbPathOf' | 'testSuite'>,
) {
  return {
    goldSql: record.task.gold as string,
    dbPath: (opts.dbPathOf ?? ((r: TrajectoryRecord) => r.task.db.path))(record),
    trajectory: record,
    mode: opts.mode ?? panel.mode,
    testSuite: opts.testSuite,
    dbId: record.task.db.id,
  };
}

export async function scoreRun(
  records: readonly TrajectoryRecord[],
  panel: ResolvedPanel,
  opts: RunOptions,
): Promise<RunReport> {
  const skipped: RunReport['skipped'] = [];
  const todo = records.filter((r) => {
    if (r.task.gold === null || r.task.gold.trim() === '') {
      skipped.push({ id: r.id, reason: 'no gold SQL in task.gold' });
      return false;
    }
    return true;
  });
  const dbPathOf = opts.dbPathOf ?? ((r: TrajectoryRecord) => r.task.db.path);
  let done = 0;
  const scored = await mapLimit(todo, opts.concurrency ?? 16, async (record): Promise<ScoredTrajectory> => {
    opts.signal?.throwIfAborted();
    const input = runInput(record, panel, opts);
    const result = await scorePanelDetailed(panel, input, opts.resources);
    const verdict = await buildContext(input, opts.resources, inputSuite(panel, input)).verdict(record.finalSql);
    opts.onProgress?.(++done, todo.length);
    return {
      id: record.id,
      groupId: record.groupId,
      sample: record.sample,
      result,
      verdict,
      format: checkFormat(record),
      advantage: null,
      odt: { status: 'no-sql' },
      greedy: isGreedy(record),
    };
  });

  const mismatch = recordsMismatch(todo, opts.resources, { dbPathOf, sql: opts.mismatchSql });
  scored.forEach((s, i) => {
    s.odt = mismatch.outcomes.get(todo[i]) ?? s.odt;
  });

  const byGroup = new Map<string, ScoredTrajectory[]>();
  for (const s of scored) byGroup.set(s.groupId, [...(byGroup.get(s.groupId) ?? []), s]);
  for (const members of byGroup.values()) {
    if (members.length < 2) continue;
    const adv = groupAdvantages(members.map((m) => m.result.total));
    members.forEach((m, i) => {
      m.advantage = adv[i];
    });
  }

  const totals = scored.map((s) => s.result.total);
  const terms: TermSummary[] = panel.terms.map((t, k) => {
    const values = scored.map((s) => s.result.terms[k].value);
    return {
      name: t.name,
      weight: t.weight,
      meanValue: mean(values),
      meanContribution: mean(scored.map((s) => s.result.terms[k].contribution)),
      min: minOf(values, 0),
      max: maxOf(values, 0),
      nonzero: values.length ? values.filter((v) => v !== 0).length / values.length : 0,
    };
  });

  const integrity = checkIntegrity(
    scored.map((s, i) => ({
      id: s.id,
      groupId: s.groupId,
      goldSql: todo[i].task.gold as string,
      predSql: s.verdict.sql,
      verdict: s.verdict,
      reward: s.result.total,
      format: s.format,
    })),
  );

  return {
    panel: panel.name,
    scored,
    skipped,
    total: { mean: mean(totals), min: minOf(totals, 0), max: maxOf(totals, 0) },
    terms,
    integrity,
    groups: groupStatistics(byGroup),
    mismatch: mismatch.report,
  };
}

function groupStatistics(byGroup: Map<string, ScoredTrajectory[]>): GroupStats | null {
  const multi = [...byGroup].filter(([, m]) => m.length > 1);
  if (multi.length === 0) return null;
  const groups: GroupSummary[] = multi.map(([groupId, m]) => {
    const rewards = m.map((x) => x.result.total);
    const correct = m.filter((x) => x.verdict.correct).length;
    return {
      groupId,
      size: m.length,
      meanReward: mean(rewards),
      stdReward: standardDeviation(rewards),
      correct,
      pass: passAtG(correct, m.length),
      zeroVariance: isZeroVariance(rewards),
    };
  });
  const all = multi.flatMap(([, m]) => m);
  const { dropped } = filterTrajectories(all, (s) => (s.format.ok ? 0.1 : -0.1), 0);
  return {
    groups,
    zeroVariance: groups.filter((g) => g.zeroVariance).map((g) => g.groupId),
    ranking: rankHardButSolvable(groups.map((g) => ({ id: g.groupId, correct: g.correct, total: g.size }))),
    mtirFilter: { kept: all.length - dropped.length, dropped: dropped.map((d) => d.id) },
  };
}
