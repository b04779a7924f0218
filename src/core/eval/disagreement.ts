// Why two evaluation modes scored the same item differently: the known categories of rule difference between the
// official checks (docs/eval-modes.md, "Comparing two modes"), read off the two queries and their result tables.
import type { Cell } from '../db/types';
import { type ResultTable, cellKey, rowKey } from './pyValues';
import { spiderResultEq } from './resultEq';

export type DisagreementCategory =
  | 'timeout'
  | 'distinct'
  | 'order'
  | 'duplicates'
  | 'column-order'
  | 'extra-columns'
  | 'tolerance'
  | 'ties'
  | 'other';

interface ModeVerdict {
  mode: string;
  exec: boolean;
  reason: string;
}

interface DisagreementInput {
  gold: string;
  pred: string;
  /** The raw results (null when a query failed or timed out). */
  goldResult: ResultTable | null;
  predResult: ResultTable | null;
  a: ModeVerdict;
  b: ModeVerdict;
}

const counts = (rows: Cell[][]): Map<string, number> => {
  const m = new Map<string, number>();
  for (const r of rows) m.set(rowKey(r), (m.get(rowKey(r)) ?? 0) + 1);
  return m;
};
const sameMap = (x: Map<string, number>, y: Map<string, number>): boolean =>
  x.size === y.size && [...x].every(([k, n]) => y.get(k) === n);
const sameKeys = (x: Map<string, number>, y: Map<string, number>): boolean =>
  x.size === y.size && [...x.keys()].every((k) => y.has(k));
const width = (t: ResultTable): number => t.rows[0]?.length ?? t.floatColumns.length;
const column = (t: ResultTable, i: number): string => t.rows.map((r) => cellKey(r[i])).join('\u0000');

/** Same shape and every cell equal, numbers allowed to differ by at most 1e-2 (Spider 2.0's tolerance). */
function equalWithinTolerance(g: Cell[][], p: Cell[][]): boolean {
  if (g.length !== p.length) return false;
  return g.every((r, i) => {
    const q = p[i];
    if (q.length !== r.length) return false;
    return r.every((c, j) => {
      const d = q[j];
      const isNum = (v: Cell) => typeof v === 'number' || typeof v === 'bigint';
      if (isNum(c) && isNum(d)) return Math.abs(Number(c) - Number(d)) <= 1e-2;
      return cellKey(c) === cellKey(d);
    });
  });
}

/**
 * The categories that explain a disagreement (several may apply; `other` when none does). Empty when the two
 * verdicts agree.
 */
export function classifyDisagreement(x: DisagreementInput): DisagreementCategory[] {
  if (x.a.exec === x.b.exec) return [];
  const out: DisagreementCategory[] = [];
  if ([x.a.reason, x.b.reason].some((r) => r.endsWith('-timeout'))) out.push('timeout');
  if (/\bdistinct\b/i.test(x.gold) || /\bdistinct\b/i.test(x.pred)) out.push('distinct');
  const g = x.goldResult,
    p = x.predResult;
  if (g && p) {
    const gc = counts(g.rows),
      pc = counts(p.rows);
    const inOrder = g.rows.length === p.rows.length && g.rows.every((r, i) => rowKey(r) === rowKey(p.rows[i]));
    if (sameMap(gc, pc) && !inOrder) out.push('order');
    if (sameKeys(gc, pc) && !sameMap(gc, pc)) out.push('duplicates');
    if (width(g) === width(p) && !sameKeys(gc, pc) && spiderResultEq(g, p, false) === 'match') {
      out.push('column-order');
    }
    if (width(p) > width(g)) {
      const predCols = new Set(Array.from({ length: width(p) }, (_, i) => column(p, i)));
      if (Array.from({ length: width(g) }, (_, i) => column(g, i)).every((c) => predCols.has(c))) {
        out.push('extra-columns');
      }
    }
    if (!sameKeys(gc, pc) && equalWithinTolerance(g.rows, p.rows)) out.push('tolerance');
    const limited = (s: string) => /\border\s+by\b/i.test(s) && /\blimit\b/i.test(s);
    if ((limited(x.gold) || limited(x.pred)) && g.rows.length === p.rows.length && !sameKeys(gc, pc)) {
      out.push('ties');
    }
  }
  return out.length ? out : ['other'];
}
