// Runs gold and predicted queries across the SQL pool and turns each pair of results into a verdict with its reason.
// Items are gathered into groups — one gold query on one database and the distinct predictions scored against it —
// that a SQL worker runs and judges itself (judge.ts), so only verdicts cross the process boundary.
import type { GroupOutcome } from '../db/pool';
import type { GroupRequest } from '../db/protocol';
import type { ExecRequest, ExecResult } from '../db/types';
import { createJudge, type GoldStep, type JudgeParams, type PredStep } from './judge';
import type { EvalMode } from './modes';
import type { CompareOutcome } from './resultEq';

/** Runs requests (concurrently if it can) and returns their results in input order. */
export type BatchExecutor = (reqs: ExecRequest[]) => Promise<ExecResult[]>;
/** Runs groups (concurrently if it can: SqlPool.execGroups) and returns their outcomes in input order. */
export type GroupExecutor = (groups: GroupRequest[]) => Promise<GroupOutcome[]>;

export type ExecReason =
  | CompareOutcome
  | 'pred-error'
  | 'gold-error'
  | 'pred-timeout'
  | 'gold-timeout'
  | 'missing-prediction'
  | 'empty-prediction';

export interface EvalItem {
  /** 0-based position in the gold file. */
  index: number;
  dbId: string;
  gold: string;
  /** The prediction line; undefined when the prediction file has no line for this item. */
  pred: string | undefined;
}

export interface ExecVerdict {
  index: number;
  exec: boolean;
  reason: ExecReason;
  /** The error message, or which test-suite database disagreed. */
  detail?: string;
  /** The gold result was empty on some database: an empty prediction result scores there for free. */
  goldEmpty: boolean;
  /** The gold result was trivial (empty, or only 0, NULL and '') on every database it ran on: set by grouped runs. */
  goldTrivial?: boolean;
  /** The mode's partial-credit score (bird-f1's Soft-F1; the lowest over several databases); 0 on any failure. */
  score?: number;
}

interface ExecutionOptions {
  mode: EvalMode;
  dbDir: string;
  timeoutMs: number;
  /** Runs statements; used (judging in this process) when `runGroups` is not given. */
  run: BatchExecutor;
  /** Runs and judges whole groups where the statements run (SqlPool.execGroups with the default worker). */
  runGroups?: GroupExecutor;
  keepDistinct?: boolean;
  /** spider2: compare each column's values sorted (the official `ignore_order`). */
  ignoreOrder?: boolean;
  /** Groups sent to the executor together: progress is reported per chunk (all chunks are in flight at once with
   *  `runGroups`, two at most with `run`, whose results carry rows). */
  chunkSize?: number;
  /** Predictions per group at most; more share a gold query in several groups (each reruns the gold). */
  groupPreds?: number;
  /** Called with successive item ranges [start, end) while queries run: work to do meanwhile. */
  whileWaiting?: (start: number, end: number) => void;
  onProgress?: (done: number, total: number) => void;
}

/**
 * Items handed to `whileWaiting` between two turns of the event loop: the pool hands workers their next statements
 * only when this process's event loop turns, so long synchronous stretches here would leave them idle.
 */
const SLICE = 16;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function failureReason(r: StepSummaryLike, who: 'pred' | 'gold'): ExecReason {
  return r.errorClass === 'timeout' ? `${who}-timeout` : `${who}-error`;
}
type StepSummaryLike = { errorClass: string | null };

/** One gold query on one database and the distinct predictions judged against it. */
interface Group {
  db: string;
  gold: string;
  params: JudgeParams;
  preds: string[];
  goldStep?: GoldStep;
  predSteps: PredStep[];
  /** Slots of the items that read this group. */
  readers: number[];
}

interface Planned {
  item: EvalItem;
  dbs: string[];
  /** Per database (in `dbs` order): the group and the prediction's index in it (-1: the prediction is the gold). */
  steps: { group: Group; pred: number }[];
}

/** A group judged in this process from statements run by `run` (callers without a group-capable pool). */
function groupsViaStatements(run: BatchExecutor): GroupExecutor {
  return async (groups) => {
    const results = await run(groups.flatMap((g) => g.reqs));
    let at = 0;
    return groups.map((g) => {
      const rs = results.slice(at, (at += g.reqs.length));
      const judge = createJudge(g.params as JudgeParams);
      const values: unknown[] = [];
      for (const r of rs) {
        const { value, last } = judge(r);
        values.push(value);
        if (last) break;
      }
      return { values };
    });
  };
}

/** The verdict of one planned item, with the mode's partial-credit score when it has one (bird-f1). */
function decide(p: Planned, scored: boolean): ExecVerdict {
  const v = decideExec(p);
  if (!scored) return v;
  let score = p.dbs.length > 0 ? 1 : 0;
  for (let d = 0; d < p.steps.length && score > 0; d++) {
    const { group, pred } = p.steps[d];
    if (!group.goldStep?.ok) score = 0;
    else if (pred >= 0) score = Math.min(score, group.predSteps[pred]?.score ?? 0);
  }
  return { ...v, score };
}

/** The verdict of one planned item from its groups' steps, database by database as the official loop goes. */
function decideExec(p: Planned): ExecVerdict {
  const index = p.item.index;
  let goldEmpty = false;
  let goldTrivial = true;
  if (p.dbs.length === 0) {
    return { index, exec: false, reason: 'gold-error', detail: `no database for db_id ${p.item.dbId}`, goldEmpty };
  }
  for (let d = 0; d < p.dbs.length; d++) {
    const db = p.dbs[d];
    const { group, pred } = p.steps[d];
    const g = group.goldStep!;
    if (!g.ok) return { index, exec: false, reason: failureReason(g, 'gold'), detail: `${g.error} (${db})`, goldEmpty };
    if (g.empty) goldEmpty = true;
    if (g.trivial !== true) goldTrivial = false;
    if (pred < 0) continue; // the gold's own result: a match
    const r = group.predSteps[pred];
    if (!r.ok) return { index, exec: false, reason: failureReason(r, 'pred'), detail: r.error ?? undefined, goldEmpty };
    if (r.outcome !== 'match') {
      const detail = p.dbs.length > 1 ? `differs on ${db}` : undefined;
      return { index, exec: false, reason: r.outcome!, detail, goldEmpty };
    }
  }
  return { index, exec: true, reason: 'match', goldEmpty, goldTrivial };
}

/**
 * Scores every item by execution. Items sharing a gold query on a database share a group, so the gold runs once per
 * group (a prediction that is exactly the gold SQL as run reuses its result). Groups go to the executor in chunks;
 * an item is decided as soon as its groups are done. Items come back in input order.
 */
export async function evaluateExecution(items: EvalItem[], opts: ExecutionOptions): Promise<ExecVerdict[]> {
  const { mode, timeoutMs } = opts;
  const scored = mode.score !== undefined;
  const chunkSize = opts.chunkSize ?? 256;
  const groupPreds = Math.max(1, opts.groupPreds ?? 8);
  const runGroups = opts.runGroups ?? groupsViaStatements(opts.run);
  const verdicts: ExecVerdict[] = new Array(items.length);
  const request = (db: string, sql: string): ExecRequest => ({
    db,
    sql,
    timeoutMs,
    maxRows: Infinity,
    maxCellChars: Infinity,
  });
  // The database files of a db_id (a directory listing in spider mode) are looked up once per run.
  const databasesOf = new Map<string, string[]>();
  const databases = (dbId: string): string[] => {
    let dbs = databasesOf.get(dbId);
    if (!dbs) databasesOf.set(dbId, (dbs = mode.databases(opts.dbDir, dbId)));
    return dbs;
  };

  // Plan: every item's groups, in order of first use. A group that is full starts another for the same gold.
  const groups: Group[] = [];
  const open = new Map<string, Group>();
  const planned: (Planned | undefined)[] = new Array(items.length);
  const pending = new Int32Array(items.length);
  let done = 0;
  items.forEach((item, slot) => {
    if (item.pred === undefined) {
      verdicts[slot] = { index: item.index, exec: false, reason: 'missing-prediction', goldEmpty: false };
      if (scored) verdicts[slot].score = 0;
      return;
    }
    if (item.pred.trim() === '') {
      verdicts[slot] = { index: item.index, exec: false, reason: 'empty-prediction', goldEmpty: false };
      if (scored) verdicts[slot].score = 0;
      return;
    }
    const prepared = mode.prepare(item.gold, item.pred, {
      keepDistinct: opts.keepDistinct,
      ignoreOrder: opts.ignoreOrder,
    });
    const p: Planned = { item, dbs: databases(item.dbId), steps: [] };
    for (const db of p.dbs) {
      const key = db + '\0' + prepared.gold;
      const newGroup = (): Group => {
        const g: Group = {
          db,
          gold: prepared.gold,
          params: { mode: mode.name, orderMatters: prepared.orderMatters },
          preds: [],
          predSteps: [],
          readers: [],
        };
        open.set(key, g);
        groups.push(g);
        return g;
      };
      let group = open.get(key);
      let pred = -1;
      if (prepared.pred !== prepared.gold) {
        pred = group ? group.preds.indexOf(prepared.pred) : -1;
        if (pred < 0) {
          if (!group || group.preds.length >= groupPreds) group = newGroup();
          pred = group.preds.push(prepared.pred) - 1;
        }
      }
      group ??= newGroup();
      if (!group.readers.includes(slot)) {
        group.readers.push(slot);
        pending[slot]++;
      }
      p.steps.push({ group, pred });
    }
    planned[slot] = p;
    if (p.dbs.length === 0) {
      verdicts[slot] = decide(p, scored);
      done++;
    }
  });

  /** Runs groups until each has a gold step and every prediction a step; a stopped group's rest runs again. */
  const runAll = async (batch: Group[]): Promise<void> => {
    let todo = batch.map((g) => ({ group: g, from: 0 }));
    while (todo.length) {
      const outcomes = await runGroups(
        todo.map(({ group, from }) => ({
          kind: 'eval',
          reqs: [request(group.db, group.gold), ...group.preds.slice(from).map((sql) => request(group.db, sql))],
          params: group.params,
        })),
      );
      const again: typeof todo = [];
      todo.forEach(({ group, from }, k) => {
        const { values, stopped } = outcomes[k];
        const steps = [...values];
        if (stopped) {
          // The statement at index steps.length timed out or lost its worker: its step says so.
          const s = { ok: false, errorClass: stopped.errorClass, error: stopped.error };
          steps.push(steps.length === 0 ? { ...s, empty: false } : { ...s, outcome: null });
        }
        group.goldStep = steps[0] as GoldStep;
        for (let i = 1; i < steps.length; i++) group.predSteps[from + i - 1] = steps[i] as PredStep;
        const next = from + steps.length - 1;
        // Predictions left unrun after a failed prediction statement run again (with the gold) in a new group.
        if (group.goldStep.ok && next < group.preds.length) again.push({ group, from: next });
      });
      todo = again;
    }
    for (const group of batch) {
      for (const slot of group.readers) {
        if (--pending[slot] === 0) {
          verdicts[slot] = decide(planned[slot]!, scored);
          done++;
        }
      }
    }
    opts.onProgress?.(done, items.length);
  };

  // Groups judged in the workers bring back verdicts only, so every chunk is handed to the pool at once and no worker
  // waits for a chunk's slowest group; statements judged here bring back rows, so two chunks at most are held.
  const window = opts.runGroups ? Number.POSITIVE_INFINITY : 2;
  const running = new Set<Promise<void>>();
  let failed: { error: unknown } | null = null;
  let nextGroup = 0;
  const launch = (): void => {
    while (running.size < window && nextGroup < groups.length && !failed) {
      const chunk = groups.slice(nextGroup, (nextGroup += chunkSize));
      const p: Promise<void> = runAll(chunk)
        .catch((error: unknown) => {
          failed ??= { error };
        })
        .finally(() => running.delete(p));
      running.add(p);
    }
  };
  launch();
  // Work for the caller while the queries run, a slice per turn of the event loop.
  for (let s = 0; opts.whileWaiting && s < items.length && !failed; s += SLICE) {
    opts.whileWaiting(s, Math.min(s + SLICE, items.length));
    await turn();
    launch();
  }
  while (running.size > 0) {
    await Promise.race(running);
    launch();
  }
  if (failed) throw (failed as { error: unknown }).error;
  if (done < items.length) opts.onProgress?.(done, items.length);
  return verdicts;
}
