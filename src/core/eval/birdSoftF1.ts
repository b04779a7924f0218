// BIRD mini_dev's Soft-F1 (bird-bench/mini_dev evaluation/evaluation_f1.py `calculate_f1_score`,
// `calculate_row_match`): partial credit for a prediction whose rows share cells with the gold rows. Rows are
// de-duplicated (first occurrence kept) and paired by position; cells compare with Python `in` (1 == 1.0).
import type { Cell } from '../db/types';
import { cellKey } from './pyValues';

/** Distinct rows in first-seen order (`list(dict.fromkeys(rows))`), each as its cells' equality keys. */
function distinctRows(rows: Cell[][]): string[][] {
  const seen = new Set<string>();
  const out: string[][] = [];
  for (const r of rows) {
    const keys = r.map(cellKey);
    const k = keys.map((x) => x.length + ':' + x).join('');
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(keys);
  }
  return out;
}

/** `calculate_row_match`: shares of the gold row's width matched, only in the prediction, only in the gold. */
function rowMatch(pred: string[], gold: string[]): [number, number, number] {
  const width = gold.length;
  const goldSet = new Set(gold),
    predSet = new Set(pred);
  let matches = 0,
    predOnly = 0,
    goldOnly = 0;
  for (const v of pred) {
    if (goldSet.has(v)) matches++;
    else predOnly++;
  }
  for (const v of gold) if (!predSet.has(v)) goldOnly++;
  return [matches / width, predOnly / width, goldOnly / width];
}

/** Soft-F1 of one item: 1 when both results are empty, else the F1 of cell-level matches over position-paired rows. */
export function softF1(gold: Cell[][], pred: Cell[][]): number {
  if (pred.length === 0 && gold.length === 0) return 1;
  const p = distinctRows(pred),
    g = distinctRows(gold);
  let tp = 0,
    fp = 0,
    fn = 0;
  g.forEach((goldRow, i) => {
    if (i >= p.length) {
      fn += 1;
      return;
    }
    const [m, po, go] = rowMatch(p[i], goldRow);
    tp += m;
    fp += po;
    fn += go;
  });
  // Rows only in the prediction.
  for (let i = g.length; i < p.length; i++) fp += 1;
  const precision = tp + fp > 0 ? tp / (tp + fp) : 0;
  const recall = tp + fn > 0 ? tp / (tp + fn) : 0;
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
}
