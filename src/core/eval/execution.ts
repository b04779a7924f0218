// Runs gold and predicted queries across the SQL pool and turns each pair of results into a verdict with its reason.
import type { ExecRequest, ExecResult } from '../db/types';
import type { EvalMode } from './modes';
import { toResultTable } from './pyValues';
import type { CompareOutcome } from './resultEq';

/** Runs requests (concurrently if it can) and returns their results in input order. */
export type BatchExecutor = (reqs: ExecRequest[]) => Promise<ExecResult[]>;

export type ExecReason = CompareOutcome
  | 'pred-error' | 'gold-error' | 'pred-timeout' | 'gold-timeout' | 'missing-prediction' | 'empty-prediction';

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
  onProgress?: (done: number, total: number) => void;
}

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

function decide(p: Planned, mode: EvalMode, goldOf: (db: string) => ExecResult, predOf: (db: string) => ExecResult): ExecVerdict {
  let goldEmpty = false;
  if (p.dbs.length === 0) {
    return { index: p.item.index, exec: false, reason: 'gold-error', detail: `no database for db_id ${p.item.dbId}`, goldEmpty };
  }
  for (const db of p.dbs) {
    const g = goldOf(db);
    if (!g.ok) return { index: p.item.index, exec: false, reason: failureReason(g, 'gold'), detail: `${g.error} (${db})`, goldEmpty };
    if (g.rows.length === 0) goldEmpty = true;
    const r = predOf(db);
    if (!r.ok) return { index: p.item.index, exec: false, reason: failureReason(r, 'pred'), detail: r.error ?? undefined, goldEmpty };
    const outcome = mode.compare(toResultTable(g), toResultTable(r), p.orderMatters);
    if (outcome !== 'match') {
      return { index: p.item.index, exec: false, reason: outcome, detail: p.dbs.length > 1 ? `differs on ${db}` : undefined, goldEmpty };
    }
  }
  return { index: p.item.index, exec: true, reason: 'match', goldEmpty };
}

/**
 * Scores every item by execution. Gold results are cached per (database, gold SQL as run), so a gold query shared
 * by many items runs once per database. Items come back in input order.
 */
export async function evaluateExecution(items: EvalItem[], opts: ExecutionOptions): Promise<ExecVerdict[]> {
  const { mode, timeoutMs } = opts;
  const chunkSize = opts.chunkSize ?? 256;
  const verdicts: ExecVerdict[] = new Array(items.length);
  const goldCache = new Map<string, ExecResult>();
  const request = (db: string, sql: string): ExecRequest => ({ db, sql, timeoutMs, maxRows: Infinity, maxCellChars: Infinity });
  const run = opts.run;
  let done = 0;

  for (let start = 0; start < items.length; start += chunkSize) {
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
        planned.push({ item, slot, dbs: mode.databases(opts.dbDir, item.dbId), ...prepared });
      }
    });

    const reqs: ExecRequest[] = [];
    const goldSlot = new Map<string, number>();
    const predSlots: number[][] = [];
    for (const p of planned) {
      for (const db of p.dbs) {
        const key = db + '\0' + p.gold;
        if (!goldCache.has(key) && !goldSlot.has(key)) { goldSlot.set(key, reqs.length); reqs.push(request(db, p.gold)); }
      }
      // A prediction that runs exactly the gold SQL reuses the gold result: the same statement on the same file.
      predSlots.push(p.dbs.map((db) => {
        if (p.pred === p.gold) return -1;
        reqs.push(request(db, p.pred));
        return reqs.length - 1;
      }));
    }
    const results = await run(reqs);
    for (const [key, i] of goldSlot) goldCache.set(key, results[i]);

    planned.forEach((p, k) => {
      const goldOf = (db: string) => goldCache.get(db + '\0' + p.gold)!;
      verdicts[p.slot] = decide(p, mode, goldOf, (db) => {
        const i = predSlots[k][p.dbs.indexOf(db)];
        return i < 0 ? goldOf(db) : results[i];
      });
    });
    for (const [key] of goldSlot) {
      const r = goldCache.get(key)!;
      if (r.rows.length > CACHE_MAX_ROWS) goldCache.delete(key);
    }
    done += chunk.length;
    opts.onProgress?.(done, items.length);
  }
  return verdicts;
}
