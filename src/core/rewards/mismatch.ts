// Progress-SQL's Table 8 (App. E.4): ODT-based structural mismatch rates over a run. Each prediction is compared
// with its gold by the ODT "only as an offline evaluator", and its fine-grained diagnostic tags are mapped "into four
// coarse structural categories: SELECT, JOIN, WHERE, and GROUP errors"; a category's rate is the share of predictions
// with at least one of its tags, and "Avg. Err. averages SELECT, JOIN, WHERE, and GROUP mismatch rates".
// Where App. E.4 is open (documented in docs/rewards.md):
//   - the tag → category map is ours (the paper names the categories, not the map); ORDER_BY_MISMATCH and the two
//     nesting tags belong to no category and are counted per tag only;
//   - rates are over the predictions the ODT could compare (both trees built); predictions without SQL or that do
//     not parse, and golds that do not parse, have no tags and are counted apart instead of as "no mismatch";
//   - the SQL compared is the trajectory's final SQL by default (for Table 8's single-turn runs, the only one), or
//     its first SQL: in a multi-turn Progress-SQL rollout that is the Round 1 answer, written before any feedback,
//     which is what single-turn inference measures;
//   - Table 8 is over greedy predictions: when a run mixes greedy (temperature 0) and sampled trajectories, a
//     `greedy` scope is reported beside `all`.
import { TAG_ORDER, type OdtTag } from './odt';
import { alignmentOf } from './progress/alignment';
import { sqlTrajectory } from './progress/turns';
import type { ScoringResources } from './types';
import type { TrajectoryRecord } from '../trajectories/types';

type MismatchCategory = 'SELECT' | 'JOIN' | 'WHERE' | 'GROUP';

const MISMATCH_CATEGORIES: ReadonlyArray<{ name: MismatchCategory; tags: readonly OdtTag[] }> = [
  { name: 'SELECT', tags: ['SELECT_ERROR', 'AGGREGATE_ERROR', 'DISTINCT_MISMATCH'] },
  { name: 'JOIN', tags: ['JOIN_MISSING', 'JOIN_KEY_MISMATCH', 'FROM_OR_JOIN_TABLE_MISMATCH'] },
  { name: 'WHERE', tags: ['WHERE_ERROR'] },
  { name: 'GROUP', tags: ['GROUP_BY_MISSING', 'GROUP_BY_ERROR'] },
];

const MISMATCH_SOURCE = 'Progress-SQL App. E.4, Table 8';

/** Which SQL of a trajectory is compared: its final SQL, or the SQL of its first turn. */
export type MismatchSql = 'final' | 'first';
export const MISMATCH_SQLS: readonly MismatchSql[] = ['final', 'first'];

export function isMismatchSql(v: unknown): v is MismatchSql {
  return (MISMATCH_SQLS as readonly unknown[]).includes(v);
}

/** The SQL of `record` the report compares (null: that turn, or the episode, produced none). */
function mismatchSqlOf(record: TrajectoryRecord, which: MismatchSql): string | null {
  return which === 'final' ? record.finalSql : sqlTrajectory({ trajectory: record, predSql: record.finalSql })[0];
}

/** Decoded at temperature 0 (null: the record does not say). */
export function isGreedy(record: TrajectoryRecord): boolean | null {
  const t = record.model.sampling.temperature;
  return typeof t === 'number' ? t === 0 : null;
}

/** What the ODT made of one prediction: its tags, or why it could not compare. */
export type OdtOutcome =
  | { status: 'compared'; tags: OdtTag[] }
  | { status: 'no-sql' | 'pred-unparsed' | 'gold-unparsed' };

interface MismatchInput {
  id: string;
  dbPath: string;
  gold: string;
  sql: string | null;
  /** Decoded at temperature 0; null when the record does not say. */
  greedy: boolean | null;
}

/** The ODT tags of one prediction against its gold (memoised with the progress panel's comparisons). */
function odtOutcome(res: ScoringResources, item: Omit<MismatchInput, 'id' | 'greedy'>): OdtOutcome {
  const c = alignmentOf(res, item.dbPath, item.gold, item.sql);
  if (!c) return { status: 'no-sql' };
  if (!c.gold.ok) return { status: 'gold-unparsed' };
  if (!c.pred.ok) return { status: 'pred-unparsed' };
  return { status: 'compared', tags: c.tags };
}

/** How often something fired: over the compared predictions, with the first item ids it fired for. */
interface MismatchCount {
  count: number;
  /** count / compared; null when nothing was compared. */
  rate: number | null;
  /** Ids of the first 50 predictions it fired for. */
  items: string[];
}

export interface MismatchScope {
  /** `all` trajectories, or the `greedy` (temperature 0) ones of a run that mixes both. */
  name: 'all' | 'greedy';
  trajectories: number;
  /** Predictions the ODT compared with their gold: the denominator of every rate. */
  compared: number;
  excluded: { noSql: number; predUnparsed: number; goldUnparsed: number };
  categories: Array<{ name: MismatchCategory; tags: OdtTag[] } & MismatchCount>;
  /** Table 8's Avg. Err.: the mean of the four category rates (null when nothing was compared). */
  average: number | null;
  /** Predictions with at least one tag of any kind. */
  anyTag: MismatchCount;
  /** Every tag, in TAG_ORDER (unfired ones with count 0). */
  tags: Array<{ tag: OdtTag } & MismatchCount>;
}

export interface MismatchReport {
  source: string;
  /** Which SQL of each trajectory was compared. */
  sql: MismatchSql;
  scopes: MismatchScope[];
}

const ITEMS_KEPT = 50;

function counter(): MismatchCount {
  return { count: 0, rate: null, items: [] };
}

function bump(c: MismatchCount, id: string): void {
  c.count++;
  if (c.items.length < ITEMS_KEPT) c.items.push(id);
}

function scopeOf(
  name: MismatchScope['name'],
  items: ReadonlyArray<{ id: string; outcome: OdtOutcome }>,
): MismatchScope {
  const excluded = { noSql: 0, predUnparsed: 0, goldUnparsed: 0 };
  const categories = MISMATCH_CATEGORIES.map((c) => ({ name: c.name, tags: [...c.tags], ...counter() }));
  const tags = TAG_ORDER.map((tag) => ({ tag, ...counter() }));
  const anyTag = counter();
  let compared = 0;
  for (const { id, outcome } of items) {
    if (outcome.status !== 'compared') {
      excluded[
        outcome.status === 'no-sql' ? 'noSql' : outcome.status === 'pred-unparsed' ? 'predUnparsed' : 'goldUnparsed'
      ]++;
      continue;
    }
    compared++;
    const fired = new Set(outcome.tags);
    if (fired.size > 0) bump(anyTag, id);
    for (const t of tags) if (fired.has(t.tag)) bump(t, id);
    for (const c of categories) if (c.tags.some((t) => fired.has(t))) bump(c, id);
  }
  const rateOf = (c: MismatchCount) => {
    c.rate = compared === 0 ? null : c.count / compared;
  };
  for (const c of [...categories, ...tags, anyTag]) rateOf(c);
  const average = compared === 0 ? null : categories.reduce((a, c) => a + (c.rate ?? 0), 0) / categories.length;
  return { name, trajectories: items.length, compared, excluded, categories, average, anyTag, tags };
}

/** The report over a run's predictions (each with its ODT outcome). */
function mismatchReport(
  items: ReadonlyArray<{ id: string; greedy: boolean | null; outcome: OdtOutcome }>,
  sql: MismatchSql = 'final',
): MismatchReport {
  const scopes = [scopeOf('all', items)];
  const greedy = items.filter((i) => i.greedy === true);
  if (greedy.length > 0 && greedy.length < items.length) scopes.push(scopeOf('greedy', greedy));
  return { source: MISMATCH_SOURCE, sql, scopes };
}

/**
 * The report over the records that have a gold SQL (others are left out, as scoring leaves them out), with each
 * such record's outcome.
 */
export function recordsMismatch(
  records: readonly TrajectoryRecord[],
  res: ScoringResources,
  opts: { dbPathOf?: (r: TrajectoryRecord) => string; sql?: MismatchSql } = {},
): { report: MismatchReport; outcomes: Map<TrajectoryRecord, OdtOutcome> } {
  const sql = opts.sql ?? 'final';
  const dbPathOf = opts.dbPathOf ?? ((r: TrajectoryRecord) => r.task.db.path);
  const outcomes = new Map<TrajectoryRecord, OdtOutcome>();
  const items: Array<{ id: string; greedy: boolean | null; outcome: OdtOutcome }> = [];
  for (const r of records) {
    const gold = r.task.gold;
    if (gold === null || gold.trim() === '') continue;
    const outcome = odtOutcome(res, { dbPath: dbPathOf(r), gold, sql: mismatchSqlOf(r, sql) });
    outcomes.set(r, outcome);
    items.push({ id: r.id, greedy: isGreedy(r), outcome });
  }
  return { report: mismatchReport(items, sql), outcomes };
}

/** The share as a percentage with one decimal, or '-' when nothing was compared. */
function mismatchPct(rate: number | null): string {
  return rate === null ? '-' : `${(100 * rate).toFixed(1)}%`;
}

/** The text block `quarry score` prints. */
export function formatMismatch(r: MismatchReport): string[] {
  const out = [`ODT structural mismatch rates (${r.source}; the ${r.sql} SQL of each trajectory):`];
  for (const s of r.scopes) {
    const cats = s.categories.map((c) => `${c.name} ${mismatchPct(c.rate)}`).join('  ');
    out.push(
      `  ${s.name}: ${s.compared} of ${s.trajectories} compared   ${cats}   ` +
        `Avg. Err. ${mismatchPct(s.average)}   any tag ${mismatchPct(s.anyTag.rate)}`,
    );
    const fired = s.tags.filter((t) => t.count > 0).map((t) => `${t.tag} ${t.count} (${mismatchPct(t.rate)})`);
    out.push(`    tags: ${fired.length ? fired.join(', ') : 'none fired'}`);
    const ex = s.excluded;
    const parts = [
      ex.noSql && `${ex.noSql} without SQL`,
      ex.predUnparsed && `${ex.predUnparsed} prediction(s) not parsed`,
      ex.goldUnparsed && `${ex.goldUnparsed} gold(s) not parsed`,
    ].filter(Boolean);
    if (parts.length) out.push(`    not compared: ${parts.join(', ')}`);
  }
  return out;
}
