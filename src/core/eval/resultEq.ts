// The result comparators of each mode, returning why two results differ rather than only whether they do.
import type { Cell } from '../db/types';
import { type ResultTable, cellKey, rowKey, unorderRow } from './pyValues';

/** Why a prediction's result was judged different from the gold one (or `match`). */
export type CompareOutcome = 'match' | 'row-count' | 'columns' | 'order' | 'values';

function multiset(rows: Cell[][]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of rows) {
    const k = rowKey(r);
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return m;
}

function sameMultiset(a: Map<string, number>, b: Cell[][]): boolean {
  const left = new Map(a);
  for (const r of b) {
    const k = rowKey(r);
    const n = left.get(k);
    if (!n) return false;
    left.set(k, n - 1);
  }
  return true;
}

function sameSet(a: string[], b: string[]): boolean {
  const sa = new Set(a),
    sb = new Set(b);
  if (sa.size !== sb.size) return false;
  for (const k of sa) if (!sb.has(k)) return false;
  return true;
}

/** The official `quick_rej`: rows with their cells sorted must agree (in order, or as sets). */
function quickAccept(gold: ResultTable, pred: ResultTable, orderMatters: boolean): boolean {
  const g = gold.rows.map((r) => rowKey(unorderRow(r, gold.floatColumns)));
  const p = pred.rows.map((r) => rowKey(unorderRow(r, pred.floatColumns)));
  if (orderMatters) return g.length === p.length && g.every((k, i) => k === p[i]);
  return sameSet(g, p);
}

/**
 * Column permutations `perm` (pred column perm[i] placed at gold position i) worth trying: a pred column is a
 * candidate for a gold position only if every value it holds occurs in that gold column. The official code prunes
 * with 20 random pred rows; pruning with all rows is sound in the same way and removes only impossible candidates,
 * so the verdict is the same and deterministic.
 */
function* candidatePermutations(gold: Cell[][], pred: Cell[][], width: number): Generator<number[]> {
  const goldCols = Array.from({ length: width }, (_, i) => new Set(gold.map((r) => cellKey(r[i]))));
  const allowed: number[][] = [];
  for (let i = 0; i < width; i++) {
    allowed.push([]);
    for (let j = 0; j < width; j++) if (pred.every((r) => goldCols[i].has(cellKey(r[j])))) allowed[i].push(j);
  }
  const perm: number[] = [];
  const used = new Array<boolean>(width).fill(false);
  function* place(i: number): Generator<number[]> {
    if (i === width) {
      yield perm.slice();
      return;
    }
    for (const j of allowed[i]) {
      if (used[j]) continue;
      used[j] = true;
      perm.push(j);
      yield* place(i + 1);
      perm.pop();
      used[j] = false;
    }
  }
  yield* place(0);
}

/**
 * Spider test-suite `result_eq`: equal when some column permutation of the prediction makes its rows equal to the
 * gold rows — as a sequence when order matters, otherwise as a multiset. Two empty results are equal.
 */
export function spiderResultEq(gold: ResultTable, pred: ResultTable, orderMatters: boolean): CompareOutcome {
  const g = gold.rows,
    p = pred.rows;
  if (g.length === 0 && p.length === 0) return 'match';
  if (g.length !== p.length) return 'row-count';
  const width = g[0].length;
  if (p[0].length !== width) return 'columns';
  if (!quickAccept(gold, pred, orderMatters)) {
    return orderMatters && quickAccept(gold, pred, false) ? 'order' : 'values';
  }
  const goldBag = orderMatters ? null : multiset(g);
  const goldKeys = orderMatters ? g.map(rowKey) : null;
  let unorderedMatch = false;
  for (const perm of candidatePermutations(g, p, width)) {
    const permuted = width === 1 ? p : p.map((r) => perm.map((j) => r[j]));
    if (orderMatters) {
      if (permuted.every((r, i) => rowKey(r) === goldKeys![i])) return 'match';
      if (!unorderedMatch && sameMultiset(multiset(g), permuted)) unorderedMatch = true;
    } else if (sameMultiset(goldBag!, permuted)) return 'match';
  }
  return unorderedMatch ? 'order' : 'values';
}

/** BIRD `calculate_ex`: `set(pred) == set(gold)` over row tuples; column order matters, duplicates and order do not. */
export function birdResultEq(gold: ResultTable, pred: ResultTable): CompareOutcome {
  const g = gold.rows.map(rowKey),
    p = pred.rows.map(rowKey);
  if (sameSet(g, p)) return 'match';
  const gw = gold.rows[0]?.length,
    pw = pred.rows[0]?.length;
  if (gw !== undefined && pw !== undefined && gw !== pw) return 'columns';
  return 'values';
}
