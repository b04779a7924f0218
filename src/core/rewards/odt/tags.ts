// Diagnostic tags (App. D, Tables 6 and 7): each feature similarity of every matched SELECT pair is compared with its
// threshold; unmatched children anywhere in the matched tree give the two nesting tags.
// Choices where App. D is open:
//   - JOIN_MISSING fires only when the prediction has fewer JOINs than the gold. Table 7's trigger reads "JOIN count
//     differs from the reference" but its meaning is "Required JOIN structures are missing", and App. G's rounds 1
//     and 2 (3 and 4 JOINs against the gold's 2) are tagged without it; an extra join shows up as JOIN_KEY_MISMATCH
//     and FROM_OR_JOIN_TABLE_MISMATCH instead.
//   - GROUP_BY_MISSING and GROUP_BY_ERROR are independent triggers: a missing GROUP BY fires both.
//   - SUBQUERY_MISSING fires for any unmatched gold child and EXTRA_SUBQUERY_OR_CTE for any unmatched predicted child
//     (App. D: "Unmatched gold children indicate missing nested structures, while unmatched predicted children
//     indicate redundant subqueries or CTEs"), at any depth of the matched tree.
//   - Tags are reported once each, in TAG_ORDER (App. G lists JOIN, table, SELECT, then GROUP BY issues).
import type { FeatureName, NodeMatch, OdtTag } from './types';

/** Table 6. */
export const TAG_THRESHOLDS: Readonly<Partial<Record<FeatureName, number>>> = Object.freeze({
  join: 0.6,
  where: 0.6,
  select: 0.6,
  groupBy: 0.65,
  orderBy: 0.65,
  tables: 0.7,
});

/** Table 7, "Meaning". */
export const TAG_MEANINGS: Readonly<Record<OdtTag, string>> = Object.freeze({
  JOIN_MISSING: 'Required JOIN structures are missing.',
  JOIN_KEY_MISMATCH: 'JOIN keys or ON conditions are inconsistent.',
  FROM_OR_JOIN_TABLE_MISMATCH: 'Missing, redundant, or incorrect tables are used.',
  WHERE_ERROR: 'Filtering predicates differ from the reference.',
  GROUP_BY_MISSING: 'Required grouping structure is missing.',
  GROUP_BY_ERROR: 'Grouping columns or granularity are inconsistent.',
  ORDER_BY_MISMATCH: 'Ordering column, direction, or limit structure is inconsistent.',
  SELECT_ERROR: 'Selected columns or aggregation expressions differ.',
  AGGREGATE_ERROR: 'Aggregation functions may be missing or misused.',
  DISTINCT_MISMATCH: 'Duplicate-removal behavior is inconsistent.',
  SUBQUERY_MISSING: 'An expected nested query branch is missing.',
  EXTRA_SUBQUERY_OR_CTE: 'Redundant nested or CTE branches are introduced.',
});

export const TAG_ORDER: readonly OdtTag[] = [
  'JOIN_MISSING',
  'JOIN_KEY_MISMATCH',
  'FROM_OR_JOIN_TABLE_MISMATCH',
  'WHERE_ERROR',
  'SELECT_ERROR',
  'AGGREGATE_ERROR',
  'DISTINCT_MISMATCH',
  'GROUP_BY_MISSING',
  'GROUP_BY_ERROR',
  'ORDER_BY_MISMATCH',
  'SUBQUERY_MISSING',
  'EXTRA_SUBQUERY_OR_CTE',
];

const THRESHOLD_TAGS: ReadonlyArray<[FeatureName, OdtTag]> = [
  ['join', 'JOIN_KEY_MISMATCH'],
  ['tables', 'FROM_OR_JOIN_TABLE_MISMATCH'],
  ['where', 'WHERE_ERROR'],
  ['select', 'SELECT_ERROR'],
  ['groupBy', 'GROUP_BY_ERROR'],
  ['orderBy', 'ORDER_BY_MISMATCH'],
];

/** One reason a tag fired (a tag may fire for several SELECT pairs; each reason is listed). */
export interface TagReason {
  tag: OdtTag;
  /** e.g. "join similarity 0.50 < 0.60", "JOIN count 1 < gold 2". */
  detail: string;
}

export function diagnose(root: NodeMatch): { tags: OdtTag[]; reasons: TagReason[] } {
  const reasons: TagReason[] = [];
  visit(root, reasons);
  const fired = new Set(reasons.map((r) => r.tag));
  return { tags: TAG_ORDER.filter((t) => fired.has(t)), reasons };
}

function visit(m: NodeMatch, out: TagReason[]): void {
  const p = m.pred.profile;
  const g = m.gold.profile;
  if (m.features && p && g) {
    if (p.counts.joins < g.counts.joins)
      out.push({ tag: 'JOIN_MISSING', detail: `JOIN count ${p.counts.joins} < gold ${g.counts.joins}` });
    for (const [feature, tag] of THRESHOLD_TAGS) {
      const threshold = TAG_THRESHOLDS[feature] as number;
      const sim = m.features[feature];
      if (sim < threshold)
        out.push({ tag, detail: `${feature} similarity ${sim.toFixed(2)} < ${threshold.toFixed(2)}` });
    }
    if (g.flags.groupBy && !p.flags.groupBy)
      out.push({ tag: 'GROUP_BY_MISSING', detail: 'gold groups, the prediction has no GROUP BY' });
    if (p.flags.aggregation !== g.flags.aggregation) {
      out.push({
        tag: 'AGGREGATE_ERROR',
        detail:
          `aggregation ${p.flags.aggregation ? 'used' : 'not used'}, ` +
          `gold ${g.flags.aggregation ? 'uses' : 'does not use'} it`,
      });
    }
    if (p.flags.distinct !== g.flags.distinct) {
      out.push({
        tag: 'DISTINCT_MISMATCH',
        detail:
          `DISTINCT ${p.flags.distinct ? 'used' : 'not used'}, ` +
          `gold ${g.flags.distinct ? 'uses' : 'does not use'} it`,
      });
    }
  }
  for (const n of m.missing)
    out.push({
      tag: 'SUBQUERY_MISSING',
      detail: `gold ${describe(n)} under ${describe(m.gold)} has no compatible match`,
    });
  for (const n of m.extra)
    out.push({
      tag: 'EXTRA_SUBQUERY_OR_CTE',
      detail: `predicted ${describe(n)} under ${describe(m.pred)} is unmatched`,
    });
  for (const c of m.children) visit(c, out);
}

function describe(n: { type: string; label: string | null }): string {
  return n.label ? `${n.type}(${n.label})` : n.type;
}
