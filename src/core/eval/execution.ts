// Runs gold and predicted queries across the SQL pool and turns each pair of results into a verdict with its reason.
import type { ExecRequest, ExecResult } from '../db/types';
import type { EvalMode } from './modes';
import { toResultTable } from './pyValues';
import type { CompareOutcome } from './resultEq';

/** Runs requests (concurrently if it can) and returns their results in input order. */
export type BatchExecutor = (reqs: ExecRequest[]) => Promise<ExecResult[]>;

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
}

export interface ExecutionOptions {
  mode: EvalMode;
  dbDir: string;
  timeoutMs: number;
  run: BatchExecutor;
  keepDistinct?: boolean;
  /** Items whose queries are sent to the pool together; bounds the memory held by results. */
  chunkSize?: number;
  /** Called with each chunk's item range [start, end) once its queries are sent: work to do while they run. */
  whileWaiting?: (start: number, end: number) => void;
  onProgress?: (done: number, total: number) => void;
}

/**
 * Items compared (or handed to `whileWaiting`) between two turns of the event loop: the pool hands workers their next
 * statements only when this process's event loop turns, so long synchronous stretches here would leave them idle.
 */
const SLICE = 16;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Gold results larger than this are not kept between chunks (they are rerun if another item needs them). */
const CACHE_MAX_ROWS = 20_000;

function failureReason(r: ExecResult, who: 'pred' | 'gold'): ExecReason {
  return r.errorClass === 'timeout' ? `${who}-timeout` : `${who}-error`;
}

interface Planned {
  item: EvalItem;
  dbs: string[];
  gold: string;
  pred: string;
  orderMatters: boolean;
}

/**
 * Cell for cell the same rows in the same order, with the same storage classes: every mode scores that a match
 * (the official comparators accept it through the identity permutation), so it skips the comparator's sorting and
 * hashing. A prediction that returns what the gold returns is the common case.
 */
function identicalResults(a: ExecResult, b: ExecResult): boolean {
  if (a === b) return true;
  if (a.rows.length !== b.rows.length || a.columns.length !== b.columns.length) return false;
  const fa = toResultTable(a).floatColumns,
    fb = toResultTable(b).floatColumns;
  if (fa.some((f, i) => f !== fb[i])) return false;
  for (let r = 0; r < a.rows.length; r++) {
    const x = a.rows[r],
      y = b.rows[r];
    if (x.length !== y.length) return false;
    for (let c = 0; c < x.length; c++) {
      const u = x[c],
        v = y[c];
      if (u === v) continue;
      if (u instanceof Uint8Array && v instanceof Uint8Array && Buffer.from(u).equals(v)) continue;
      return false;
    }
  }
  return true;
}

function decide(
  p: Planned,
  mode: EvalMode,
  goldOf: (db: string) => ExecResult,
  predOf: (db: string) => ExecResult,
): ExecVerdict {
  let goldEmpty = false;
  if (p.dbs.length === 0) {
    return {
      index: p.item.index,
      exec: false,
      reason: 'gold-error',
      detail: `no database for db_id ${p.item.dbId}`,
      goldEmpty,
    };
  }
  for (const db of p.dbs) {
    const g = goldOf(db);
    if (!g.ok)
      return {
        index: p.item.index,
        exec: false,
        reason: failureReason(g, 'gold'),
        detail: `${g.error} (${db})`,
        goldEmpty,
      };
    if (g.rows.length === 0) goldEmpty = true;
    const r = predOf(db);
    if (!r.ok)
      return {
        index: p.item.index,
        exec: false,
        reason: failureReason(r, 'pred'),
        detail: r.error ?? undefined,
        goldEmpty,
      };
    const outcome = identicalResults(g, r) ? 'match' : mode.compare(toResultTable(g), toResultTable(r), p.orderMatters);
    if (outcome !== 'match') {
      return {
        index: p.item.index,
        exec: false,
        reason: outcome,
        detail: p.dbs.length > 1 ? `differs on ${db}` : undefined,
        goldEmpty,
      };
    }
  }
  return { index: p.item.index, exec: true, reason: 'match', goldEmpty };
}

/**
 * Scores every item by execution. Gold results are cached per (database, gold SQL as run), so a gold query shared
 * by many items runs once per database. Items come back in input order.
 *
 * Chunks overlap: chunk k+1 is sent to the pool before chunk k's results are compared, so the workers never wait
 * while the caller compares (or does `whileWaiting` work); at most two chunks' results are held at once.
 */
export async function evaluateExecution(items: EvalItem[], opts: ExecutionOptions): Promise<ExecVerdict[]> {
  const { mode, timeoutMs } = opts;
  const chunkSize = opts.chunkSize ?? 256;
  const verdicts: ExecVerdict[] = new Array(items.length);
  const goldCache = new Map<string, ExecResult>();
  const request = (db: string, sql: string): ExecRequest => ({
    db,
    sql,
    timeoutMs,
    maxRows: Infinity,
    maxCellChars: Infinity,
  });
  const run = opts.run;
  let done = 0;
  // The database files of a db_id (a directory listing in spider mode) are looked up once per run.
  const databasesOf = new Map<string, string[]>();
  const databases = (dbId: string): string[] => {
    let dbs = databasesOf.get(dbId);
    if (!dbs) databasesOf.set(dbId, (dbs = mode.databases(opts.dbDir, dbId)));
    return dbs;
  };

  interface Chunk {
    start: number;
    size: number;
    planned: (Planned & { slot: number })[];
    goldSlot: Map<string, number>;
    predSlots: number[][];
    /** Gold keys this chunk reads, whoever requested them. */
    goldKeys: Set<string>;
    results: Promise<ExecResult[]>;
  }

  /** Plans and sends one chunk; gold results already cached or requested by the chunk in flight are not rerun. */
  const send = (start: number, inFlight: Chunk | null): Chunk => {
    const chunk = items.slice(start, start + chunkSize);
    const planned: (Planned & { slot: number })[] = [];
    chunk.forEach((item, k) => {
      const slot = start + k;
      if (item.pred === undefined) {
        verdicts[slot] = { index: item.index, exec: false, reason: 'missing-prediction', goldEmpty: false };
      } else if (item.pred.trim() === '') {
        verdicts[slot] = { index: item.index, exec: false, reason: 'empty-prediction', goldEmpty: false };
      } else {
        const prepared = mode.prepare(item.gold, item.pred, { keepDistinct: opts.keepDistinct });
        planned.push({ item, slot, dbs: databases(item.dbId), ...prepared });
      }
    });
    const reqs: ExecRequest[] = [];
    const goldSlot = new Map<string, number>();
    const goldKeys = new Set<string>();
    const predSlots: number[][] = [];
    for (const p of planned) {
      for (const db of p.dbs) {
        const key = db + '\0' + p.gold;
        goldKeys.add(key);
        if (!goldCache.has(key) && !goldSlot.has(key) && !inFlight?.goldSlot.has(key)) {
          goldSlot.set(key, reqs.length);
          reqs.push(request(db, p.gold));
        }
      }
      // A prediction that runs exactly the gold SQL reuses the gold result: the same statement on the same file.
      predSlots.push(
        p.dbs.map((db) => {
          if (p.pred === p.gold) return -1;
          reqs.push(request(db, p.pred));
          return reqs.length - 1;
        }),
      );
    }
    return { start, size: chunk.length, planned, goldSlot, predSlots, goldKeys, results: run(reqs) };
  };

  /** Waits for a chunk's results and decides its items; `next` (in flight) may still need its gold results. */
  const finish = async (c: Chunk, next: Chunk | null): Promise<void> => {
    const results = await c.results;
    for (const [key, i] of c.goldSlot) goldCache.set(key, results[i]);
    for (let k = 0; k < c.planned.length; k++) {
      const p = c.planned[k];
      const goldOf = (db: string) => goldCache.get(db + '\0' + p.gold)!;
      verdicts[p.slot] = decide(p, mode, goldOf, (db) => {
        const i = c.predSlots[k][p.dbs.indexOf(db)];
        return i < 0 ? goldOf(db) : results[i];
      });
      if (k % SLICE === SLICE - 1) await turn();
    }
    // Large gold results are not kept (they are rerun if a later chunk needs them), unless the chunk in flight does.
    for (const key of c.goldKeys) {
      const r = goldCache.get(key);
      if (r && r.rows.length > CACHE_MAX_ROWS && !next?.goldKeys.has(key)) goldCache.delete(key);
    }
    done += c.size;
    opts.onProgress?.(done, items.length);
  };

  let inFlight: Chunk | null = null;
  for (let start = 0; start < items.length; start += chunkSize) {
    const next = send(start, inFlight);
    for (let s = start; opts.whileWaiting && s < start + next.size; s += SLICE) {
      opts.whileWaiting(s, Math.min(s + SLICE, start + next.size));
      await turn();
    }
    if (inFlight) await finish(inFlight, next);
    inFlight = next;
  }
  if (inFlight) await finish(inFlight, null);
  return verdicts;
}
