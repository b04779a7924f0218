// Scores trajectories for a list, lazily and once: the execution verdict (is the final SQL's result the gold's?) and
// the total of a reward panel, computed with the reward engine only when a record has gold SQL and its database is
// there. Results are cached per (panel, trajectory id), so a reviewer flipping filters never pays twice.
import type { TrajectoryRecord } from './types';
import { defaultPanelFor } from './summary';
import { loadPanel } from '../rewards/panelFile';
import { scorePanelDetailed, buildContext } from '../rewards/engine';
import { groupAdvantages, isZeroVariance, mean, standardDeviation } from '../rewards/group';
import type { DetailedPanelResult, ExecOutcome, ResolvedPanel, ScoringResources } from '../rewards/types';
import type { EvalModeName } from '../eval/modes';

/** `auto`: each trajectory's own protocol's panel (skyrl → skyrl, sqltrail → sqltrail, …). */
export const AUTO_PANEL = 'auto';

export type ScoreOutcome =
  | { status: 'scored'; panel: string; correct: boolean; reason: string; reward: number }
  | { status: 'skipped'; panel: string; reason: string };

export interface TrajectoryExplanation {
  panel: string;
  result: DetailedPanelResult;
  verdict: ExecOutcome;
}

interface ReplayScorerOptions {
  resources: ScoringResources;
  /** Whether a database file is there to run on (the record may come from another machine). */
  dbExists: (path: string) => boolean;
  /** Where a record's database is (default task.db.path). */
  dbPathOf?: (r: TrajectoryRecord) => string;
  /** What identifies a database file's current content (e.g. `size:mtime`), or null when it is not there. */
  dbStamp?: (path: string) => string | null;
  mode?: EvalModeName;
  /** Resolves a panel name (default loadPanel: built-ins or a panel .json file). */
  panel?: (name: string) => ResolvedPanel;
}

export interface ReplayScorer {
  /** The panel name `name` means for this record (AUTO_PANEL resolved through the protocol). */
  panelNameFor(record: TrajectoryRecord, name: string): string;
  /** Verdict and panel total; cached. Never rejects: failures become `skipped` with the reason. */
  score(record: TrajectoryRecord, panel: string): Promise<ScoreOutcome>;
  /** The panel's terms with explanations and the verdict, for one trajectory's detail view; throws why it cannot. */
  explain(record: TrajectoryRecord, panel: string): Promise<TrajectoryExplanation>;
  /** Cached outcomes, for a caller that shows progress. */
  cached(record: TrajectoryRecord, panel: string): ScoreOutcome | undefined;
  /** Every outcome computed so far with the database stamp it was computed against, to keep across sessions. */
  snapshot(): SavedOutcome[];
  /**
   * Takes outcomes saved earlier. One whose database stamp no longer matches (the database changed or is gone) is
   * dropped; returns how many were taken.
   */
  restore(saved: readonly SavedOutcome[], records: readonly TrajectoryRecord[]): number;
}

/** A saved outcome: for trajectory `id` with `panel`, computed when its database had `dbStamp` (size:mtime). */
export interface SavedOutcome {
  id: string;
  dbStamp: string | null;
  outcome: ScoreOutcome;
}

/** Why a record cannot be scored here, or null when it can. */
export function unscorableReason(r: TrajectoryRecord, dbPath: string, dbExists: (p: string) => boolean): string | null {
  if (r.task.gold === null || r.task.gold.trim() === '') return 'no gold SQL in the task';
  if (!dbExists(dbPath)) return `database not found: ${dbPath}`;
  return null;
}

export function createReplayScorer(opts: ReplayScorerOptions): ReplayScorer {
  const resolve = opts.panel ?? ((name: string) => loadPanel(name));
  const dbPathOf = opts.dbPathOf ?? ((r: TrajectoryRecord) => r.task.db.path);
  const panels = new Map<string, ResolvedPanel>();
  const done = new Map<string, ScoreOutcome>();
  const running = new Map<string, Promise<ScoreOutcome>>();

  const panelNameFor = (r: TrajectoryRecord, name: string) =>
    name === AUTO_PANEL ? defaultPanelFor(r.protocol.name) : name;
  const panelOf = (name: string) => {
    let p = panels.get(name);
    if (!p) {
      p = resolve(name);
      panels.set(name, p);
    }
    return p;
  };

  async function explain(record: TrajectoryRecord, panel: string): Promise<TrajectoryExplanation> {
    const name = panelNameFor(record, panel);
    const dbPath = dbPathOf(record);
    const why = unscorableReason(record, dbPath, opts.dbExists);
    if (why) throw new Error(why);
    const input = {
      goldSql: record.task.gold as string,
      dbPath,
      trajectory: record,
      mode: opts.mode ?? panelOf(name).mode,
    };
    const result = await scorePanelDetailed(panelOf(name), input, opts.resources);
    const verdict = await buildContext(input, opts.resources).verdict(record.finalSql);
    return { panel: name, result, verdict };
  }

  async function compute(record: TrajectoryRecord, name: string): Promise<ScoreOutcome> {
    try {
      const dbPath = dbPathOf(record);
      const why = unscorableReason(record, dbPath, opts.dbExists);
      if (why) return { status: 'skipped', panel: name, reason: why };
      const { result, verdict } = await explain(record, name);
      return { status: 'scored', panel: name, correct: verdict.correct, reason: verdict.reason, reward: result.total };
    } catch (err) {
      return { status: 'skipped', panel: name, reason: (err as Error).message };
    }
  }

  const stampOf = opts.dbStamp ?? (() => null);
  /** Database stamp per outcome key, taken when the outcome was computed. */
  const stamps = new Map<string, string | null>();

  return {
    panelNameFor,
    explain,
    cached: (record, panel) => done.get(panelNameFor(record, panel) + '\0' + record.id),
    snapshot: () =>
      [...done].map(([key, outcome]) => ({
        id: key.slice(key.indexOf('\0') + 1),
        dbStamp: stamps.get(key) ?? null,
        outcome,
      })),
    restore(saved, records) {
      let taken = 0;
      const current = new Map<string, string | null>();
      const dbOf = new Map<string, string>();
      for (const r of records) dbOf.set(r.id, dbPathOf(r));
      for (const s of saved) {
        const key = s.outcome.panel + '\0' + s.id;
        if (done.has(key)) continue;
        const db = dbOf.get(s.id);
        if (db === undefined) continue;
        let now = current.get(db);
        if (now === undefined) {
          now = stampOf(db);
          current.set(db, now);
        }
        if (s.dbStamp === null || now !== s.dbStamp) continue;
        done.set(key, s.outcome);
        stamps.set(key, s.dbStamp);
        taken++;
      }
      return taken;
    },
    score(record, panel) {
      const name = panelNameFor(record, panel);
      const key = name + '\0' + record.id;
      const hit = done.get(key);
      if (hit) return Promise.resolve(hit);
      let p = running.get(key);
      if (!p) {
        const db = dbPathOf(record);
        const stamp = stampOf(db);
        p = compute(record, name).then((o) => {
          done.set(key, o);
          stamps.set(key, stamp);
          running.delete(key);
          return o;
        });
        running.set(key, p);
      }
      return p;
    },
  };
}

export interface GroupStatistics {
  size: number;
  /** Members with a reward (the statistics are over these). */
  scored: number;
  correct: number;
  mean: number;
  /** Sample standard deviation (n − 1), as GRPO's estimator uses. */
  std: number;
  /** A_i per member in input order; null for members without a reward. */
  advantages: (number | null)[];
  /** All rewards equal: the group gives GRPO no gradient. */
  zeroVariance: boolean;
}

/** GRPO statistics of one group from its members' rewards (null = not scored) and verdicts. */
export function groupStatistics(
  rewards: readonly (number | null)[],
  correct: readonly (boolean | null)[] = [],
): GroupStatistics {
  const have = rewards.map((r, i) => ({ r, i })).filter((x): x is { r: number; i: number } => x.r !== null);
  const values = have.map((x) => x.r);
  const adv = groupAdvantages(values);
  const advantages: (number | null)[] = rewards.map(() => null);
  have.forEach((x, j) => {
    advantages[x.i] = adv[j];
  });
  return {
    size: rewards.length,
    scored: values.length,
    correct: correct.filter((c) => c === true).length,
    mean: mean(values),
    std: standardDeviation(values),
    advantages,
    zeroVariance: values.length >= 2 && isZeroVariance(values),
  };
}
