/**
 * Execution-accuracy compatibility modes. Each reproduces one official evaluator's verdicts; see docs/eval-modes.md.
 *
 * `spider` — taoyds/test-suite-sql-eval `exec_eval.py` (`eval_exec_match`, `result_eq`) as driven by
 *   evaluation.py `evaluate()`:
 *   - the prediction's first tab-separated field is used and " value " becomes " 1 ";
 *   - both queries: "> =", "< =", "! =" joined; DISTINCT tokens removed and only the first statement kept (unless
 *     keepDistinct); YEAR(CURDATE()) → 2020;
 *   - rows compared in order only when the rewritten gold contains "order by" (any case), otherwise as multisets;
 *     the prediction's columns may be permuted; two empty results are equal;
 *   - cells compare with Python semantics (1 == 1.0, None == None, bytes ≠ str, '1' ≠ 1);
 *   - every file under <db-dir>/<db_id>/ whose name contains ".sqlite" is a test-suite database; the prediction
 *     must match the gold on all of them;
 *   - a gold error aborts the official script (assert); here it scores 0 with reason gold-error and a warning.
 *     The official 60 s asyncio timeout cannot interrupt sqlite3, so it never fires; here a statement is killed
 *     after --timeout-ms (default 60 s) and the item scores 0 (pred-timeout / gold-timeout).
 * `bird` — bird-bench/mini_dev `evaluation_ex.py`: `set(pred_rows) == set(gold_rows)`, column order matters,
 *   duplicates and row order do not; any error or timeout scores 0; one database <db-dir>/<db_id>/<db_id>.sqlite;
 *   no query rewriting; 30 s limit (the official limit covers both queries together; here each gets 30 s).
 * `omnisql` — BIRD's rules with OmniSQL's 10 s limit.
 * `spider2` — xlang-ai/Spider2 spider2-lite evaluation_suite/evaluate.py `compare_pandas_table` (spider2Compare.ts):
 *   both results taken through pandas' CSV trip; every gold column must equal some predicted column as a vector
 *   (extra predicted columns allowed, numbers within 1e-2, NaN = 0); row order matters unless ignoreOrder (the
 *   official per-item `ignore_order`); one database <db-dir>/<db_id>/<db_id>.sqlite; no query rewriting; 60 s.
 * `bird-f1` — bird-bench/mini_dev `evaluation_f1.py` (birdSoftF1.ts): each item scores its Soft-F1 in [0, 1]
 *   (partial credit for shared cells of position-paired distinct rows); its verdict is full credit (F1 = 1); BIRD's
 *   database and 30 s limit. Only for `quarry eval`, not a reward comparator.
 * `bird-ves` — bird-bench/mini_dev `evaluation_ves.py` (birdVes.ts): BIRD's EX verdict, then each correct item's
 *   gold and prediction timed alternately (official: 100 rounds) for its R-VES reward tier. Only for `quarry eval`.
 */
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultTable } from './pyValues';
import { type CompareOutcome, spiderResultEq, birdResultEq } from './resultEq';
import { spider2Compare } from './spider2Compare';
import { softF1 } from './birdSoftF1';
import {
  plugValuePlaceholder,
  joinSplitOperators,
  replaceCurrentYear,
  removeDistinct,
  goldOrderMatters,
} from './rewrite';

/** The comparators: modes a reward panel, a benchmark or `quarry eval` may score with. */
export type EvalModeName = 'spider' | 'bird' | 'omnisql' | 'spider2';
export const EVAL_MODES: readonly EvalModeName[] = ['spider', 'bird', 'omnisql', 'spider2'];
/** Every mode `quarry eval` scores with: the comparators and BIRD's partial-credit and efficiency checks. */
export type AnswerCheckName = EvalModeName | 'bird-f1' | 'bird-ves';
export const ANSWER_CHECKS: readonly AnswerCheckName[] = [...EVAL_MODES, 'bird-f1', 'bird-ves'];

interface PreparedPair {
  gold: string;
  pred: string;
  orderMatters: boolean;
}

export interface EvalMode {
  name: AnswerCheckName;
  defaultTimeoutMs: number;
  /** The database files an item with this db_id runs on; empty when there are none. */
  databases(dbDir: string, dbId: string): string[];
  /** The queries exactly as they are run (ignoreOrder: spider2's `ignore_order`, row order not compared). */
  prepare(gold: string, pred: string, opts: { keepDistinct?: boolean; ignoreOrder?: boolean }): PreparedPair;
  compare(gold: ResultTable, pred: ResultTable, orderMatters: boolean): CompareOutcome;
  /** A partial-credit score of a prediction that ran, in [0, 1] (bird-f1's Soft-F1); absent in all-or-nothing modes. */
  score?(gold: ResultTable, pred: ResultTable): number;
  /** Whether each correct item is timed for BIRD's R-VES after the verdicts (bird-ves). */
  timesCorrectItems?: boolean;
}

/** Prediction lines may carry extra tab-separated fields; evaluation.py uses the first. */
function firstField(line: string): string {
  return line.trim().split('\t')[0];
}

const spider: EvalMode = {
  name: 'spider',
  defaultTimeoutMs: 60_000,
  databases(dbDir, dbId) {
    const dir = join(dbDir, dbId);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((n) => n.includes('.sqlite'))
      .sort()
      .map((n) => join(dir, n));
  },
  prepare(gold, pred, { keepDistinct }) {
    let p = joinSplitOperators(plugValuePlaceholder(firstField(pred)));
    let g = joinSplitOperators(gold);
    if (!keepDistinct) {
      p = removeDistinct(p);
      g = removeDistinct(g);
    }
    return { gold: replaceCurrentYear(g), pred: replaceCurrentYear(p), orderMatters: goldOrderMatters(g) };
  },
  compare: spiderResultEq,
};

function birdLike(name: AnswerCheckName, defaultTimeoutMs: number): EvalMode {
  return {
    name,
    defaultTimeoutMs,
    databases(dbDir, dbId) {
      const file = join(dbDir, dbId, `${dbId}.sqlite`);
      return existsSync(file) ? [file] : [];
    },
    prepare(gold, pred) {
      return { gold, pred, orderMatters: false };
    },
    compare: (gold, pred) => birdResultEq(gold, pred),
  };
}

/** Spider 2.0's outcome in the shared vocabulary; with order kept, a result that matches sorted is an `order` miss. */
function spider2Outcome(gold: ResultTable, pred: ResultTable, orderMatters: boolean): CompareOutcome {
  const o = spider2Compare([gold], pred, { ignoreOrder: !orderMatters });
  if (o === 'match') return 'match';
  if (orderMatters && spider2Compare([gold], pred, { ignoreOrder: true }) === 'match') return 'order';
  return o === 'bad-condition-cols' ? 'columns' : o;
}

const spider2: EvalMode = {
  ...birdLike('spider2', 60_000),
  prepare(gold, pred, { ignoreOrder }) {
    return { gold, pred, orderMatters: !ignoreOrder };
  },
  compare: spider2Outcome,
};

/** Soft-F1 of one item; full credit is this mode's match, and a partial one says how the rows differ. */
function softF1Outcome(gold: ResultTable, pred: ResultTable): CompareOutcome {
  if (softF1(gold.rows, pred.rows) === 1) return 'match';
  const gw = gold.rows[0]?.length,
    pw = pred.rows[0]?.length;
  if (gw !== undefined && pw !== undefined && gw !== pw) return 'columns';
  return gold.rows.length === pred.rows.length ? 'values' : 'row-count';
}

const MODES: Record<AnswerCheckName, EvalMode> = {
  spider,
  spider2,
  bird: birdLike('bird', 30_000),
  omnisql: birdLike('omnisql', 10_000),
  'bird-f1': {
    ...birdLike('bird-f1', 30_000),
    compare: softF1Outcome,
    score: (gold, pred) => softF1(gold.rows, pred.rows),
  },
  'bird-ves': { ...birdLike('bird-ves', 30_000), timesCorrectItems: true },
};

export function evalMode(name: string): EvalMode {
  const m = Object.hasOwn(MODES, name) ? MODES[name as AnswerCheckName] : undefined;
  if (!m) throw new Error(`unknown mode '${name}' (expected ${ANSWER_CHECKS.join(', ')})`);
  return m;
}
