// MTSQL-R1's clause match (§3.3.2): AVG F1(c(ŷ), c(y)) over the clauses SELECT, WHERE, JOIN, GROUP, ORDER, with
// c(·) the normalised clause items of extractClauses. Per clause, F1 of the two multisets of items. A clause absent
// from both queries says nothing about the prediction and is left out of the average (the paper does not say; see
// docs/rewards.md); if all five are absent from both, the match is perfect (1).
import type { ClauseSets } from '../sql';
import { clausesOf } from './analysis';
import type { ScoringResources } from './types';

export const F1_CLAUSES = ['select', 'where', 'join', 'group', 'order'] as const;
export type F1Clause = (typeof F1_CLAUSES)[number];

interface ClauseF1 {
  value: number;
  /** F1 per clause present in either query. */
  perClause: Partial<Record<F1Clause, number>>;
  /** Set when the prediction did not parse (value is then 0). */
  parseError?: string;
  /** Set when the gold did not parse (value is then 0: nothing to compare with). */
  goldParseError?: string;
}

function multisetF1(pred: readonly string[], gold: readonly string[]): number {
  if (pred.length === 0 && gold.length === 0) return 1;
  const left = new Map<string, number>();
  for (const g of gold) left.set(g, (left.get(g) ?? 0) + 1);
  let inter = 0;
  for (const p of pred) {
    const n = left.get(p);
    if (n) {
      inter++;
      left.set(p, n - 1);
    }
  }
  return (2 * inter) / (pred.length + gold.length);
}

function clauseSetsF1(pred: ClauseSets, gold: ClauseSets): Pick<ClauseF1, 'value' | 'perClause'> {
  const perClause: ClauseF1['perClause'] = {};
  for (const c of F1_CLAUSES) {
    if (pred[c].length === 0 && gold[c].length === 0) continue;
    perClause[c] = multisetF1(pred[c], gold[c]);
  }
  const vals = Object.values(perClause) as number[];
  return { value: vals.length === 0 ? 1 : vals.reduce((a, b) => a + b, 0) / vals.length, perClause };
}

export function clauseF1(res: ScoringResources, dbPath: string, predSql: string, goldSql: string): ClauseF1 {
  const gold = clausesOf(res, dbPath, goldSql);
  if (!gold.ok) return { value: 0, perClause: {}, goldParseError: gold.error };
  const pred = clausesOf(res, dbPath, predSql);
  if (!pred.ok) return { value: 0, perClause: {}, parseError: pred.error };
  return clauseSetsF1(pred.sets, gold.sets);
}

export function describeClauseF1(f: ClauseF1): string {
  if (f.goldParseError) return `gold SQL does not parse: ${f.goldParseError.slice(0, 60)}`;
  if (f.parseError) return 'SQL does not parse: clause F1 0';
  const parts = Object.entries(f.perClause).map(([c, v]) => `${c.toUpperCase()} ${round(v)}`);
  return parts.length ? parts.join(', ') : 'no clauses in either query';
}

export function round(x: number, digits = 3): string {
  return String(Math.round(x * 10 ** digits) / 10 ** digits);
}
