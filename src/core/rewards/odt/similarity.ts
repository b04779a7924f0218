// Structural scoring (App. D, "Structural Scoring" and "Recursive Child Matching").
//   s_local = Σ_f w_f · sim_f / Σ_f w_f over the eight features of Table 5;
//   sets: Jaccard (both empty 1.0, one empty 0.0); counts: NumSim; Booleans: 1 if equal else 0;
//   s_node = α · s_local + (1 − α) · s_child for SELECT nodes (α = 0.7), s_node = s_child for the others;
//   s_child: for each gold child in order, the highest-scoring unmatched predicted child of a compatible type (CTE
//   names must also match, case-insensitively), summed and divided by max(|C_pred|, |C_gold|).
// Choices where App. D is open:
//   - "Structural counts" is the mean NumSim of the two counts App. D names (JOIN count, SELECT-item count).
//   - The Boolean DISTINCT is the only Boolean with a weight; HAVING predicates and the other Booleans are profiled
//     (and AGGREGATE_ERROR reads aggregation usage) but Table 5 gives them no weight, so they do not score.
//   - s_child applies "for nested structures" (§4.2): a SELECT node where neither side has children scores s_local
//     alone (the weights renormalised over the term that applies), so a flat query identical to the gold scores 1
//     and a flat query unlike it is not lifted by 0.3. When only one side nests, s_child = 0 (no matched pair over
//     max(|C_pred|, |C_gold|) > 0). A non-SELECT node with no children on either side scores 1.
//   - Compatible types are equal types; the SET_OP operator is a label, not a constraint (App. D names only the CTE
//     name as an extra condition), so UNION vs INTERSECT over the same arms is a structural match and shows up in
//     the lexical score. Ties between predicted children go to the first in query order.
// Cost: every compatible (predicted, gold) child pair is scored recursively, as greedy matching requires; that is
// quadratic per level and grows with nesting depth, which real queries keep small (Spider train: ~0.01 ms a pair).
import { jaccard } from '../../sql/bigrams';
import type { FeatureName, FeatureSims, LocalProfile, NodeMatch, OdtNode } from './types';

/** Table 5. */
export const FEATURE_WEIGHTS: Readonly<Record<FeatureName, number>> = Object.freeze({
  join: 0.22,
  where: 0.2,
  select: 0.16,
  tables: 0.12,
  groupBy: 0.1,
  counts: 0.1,
  orderBy: 0.06,
  distinct: 0.04,
});

export const FEATURES: readonly FeatureName[] = [
  'join',
  'where',
  'select',
  'tables',
  'groupBy',
  'counts',
  'orderBy',
  'distinct',
];

/** α for SELECT nodes. */
export const ALPHA = 0.7;

/** NumSim(a, b) = 1 − min(1, |a − b| / max(1, b)), b the gold count. */
export function numSim(pred: number, gold: number): number {
  return 1 - Math.min(1, Math.abs(pred - gold) / Math.max(1, gold));
}

interface ProfileSets {
  join: Set<string>;
  where: Set<string>;
  select: Set<string>;
  tables: Set<string>;
  groupBy: Set<string>;
  orderBy: Set<string>;
}

// Gold trees are cached and scored against many predictions: build each profile's sets once.
const setCache = new WeakMap<LocalProfile, ProfileSets>();

function setsOf(p: LocalProfile): ProfileSets {
  let s = setCache.get(p);
  if (!s) {
    s = {
      join: new Set(p.join),
      where: new Set(p.where),
      select: new Set(p.select),
      tables: new Set(p.tables),
      groupBy: new Set(p.groupBy),
      orderBy: new Set(p.orderBy),
    };
    setCache.set(p, s);
  }
  return s;
}

export function featureSimilarities(pred: LocalProfile, gold: LocalProfile): FeatureSims {
  const p = setsOf(pred);
  const g = setsOf(gold);
  return {
    join: jaccard(p.join, g.join),
    where: jaccard(p.where, g.where),
    select: jaccard(p.select, g.select),
    tables: jaccard(p.tables, g.tables),
    groupBy: jaccard(p.groupBy, g.groupBy),
    counts:
      (numSim(pred.counts.joins, gold.counts.joins) + numSim(pred.counts.selectItems, gold.counts.selectItems)) / 2,
    orderBy: jaccard(p.orderBy, g.orderBy),
    distinct: pred.flags.distinct === gold.flags.distinct ? 1 : 0,
  };
}

export function localSimilarity(sims: FeatureSims): number {
  let num = 0;
  let den = 0;
  for (const f of FEATURES) {
    num += FEATURE_WEIGHTS[f] * sims[f];
    den += FEATURE_WEIGHTS[f];
  }
  return num / den;
}

function compatible(pred: OdtNode, gold: OdtNode): boolean {
  if (pred.type !== gold.type) return false;
  if (pred.type === 'CTE') return (pred.label ?? '').toLowerCase() === (gold.label ?? '').toLowerCase();
  return true;
}

/** s_node for a compatible pair, with the matching that produced it. */
function scoreNodes(pred: OdtNode, gold: OdtNode): NodeMatch {
  const { children, missing, extra, score: child } = matchChildren(pred.children, gold.children);
  if (pred.type === 'SELECT' && pred.profile && gold.profile) {
    const features = featureSimilarities(pred.profile, gold.profile);
    const local = localSimilarity(features);
    const nested = pred.children.length > 0 || gold.children.length > 0;
    const score = nested ? ALPHA * local + (1 - ALPHA) * child : local;
    return { pred, gold, score, local, features, child: nested ? child : null, children, missing, extra };
  }
  return { pred, gold, score: child, local: null, features: null, child, children, missing, extra };
}

function matchChildren(
  pred: OdtNode[],
  gold: OdtNode[],
): { children: NodeMatch[]; missing: OdtNode[]; extra: OdtNode[]; score: number } {
  if (pred.length === 0 && gold.length === 0) return { children: [], missing: [], extra: [], score: 1 };
  const used = new Array<boolean>(pred.length).fill(false);
  const children: NodeMatch[] = [];
  const missing: OdtNode[] = [];
  let sum = 0;
  for (const g of gold) {
    let best: NodeMatch | null = null;
    let bestAt = -1;
    for (let i = 0; i < pred.length; i++) {
      if (used[i] || !compatible(pred[i], g)) continue;
      const m = scoreNodes(pred[i], g);
      if (!best || m.score > best.score) {
        best = m;
        bestAt = i;
      }
      if (best.score === 1) break; // nothing scores higher, and ties go to the first
    }
    if (best) {
      used[bestAt] = true;
      children.push(best);
      sum += best.score;
    } else missing.push(g);
  }
  const extra = pred.filter((_, i) => !used[i]);
  return { children, missing, extra, score: sum / Math.max(pred.length, gold.length) };
}

/** F_struct = s_root. */
export function structuralSimilarity(pred: OdtNode, gold: OdtNode): NodeMatch {
  return scoreNodes(pred, gold);
}
