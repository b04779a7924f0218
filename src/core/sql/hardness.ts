// Spider's hardness levels, exactly as the official evaluation.py's Evaluator.eval_hardness computes them from the
// parsed gold query, quirks included (see countOthers).
import { parseSpiderSql } from './spider/parse';
import type { SpiderSchema } from './spider/schema';
import { WHERE_OPS, isSql, type Condition, type CondUnit, type SpiderSql } from './spider/types';

export type Hardness = 'easy' | 'medium' | 'hard' | 'extra';

const condUnits = (c: Condition): CondUnit[] => c.filter((_, i) => i % 2 === 0) as CondUnit[];
const condOps = (c: Condition): string[] => c.filter((_, i) => i % 2 === 1) as string[];

/** get_nestedSQL: subqueries used as condition values, then INTERSECT, EXCEPT, UNION. */
function nestedSqls(sql: SpiderSql): SpiderSql[] {
  const nested: SpiderSql[] = [];
  for (const cu of [...condUnits(sql.from.conds), ...condUnits(sql.where), ...condUnits(sql.having)]) {
    if (isSql(cu[3])) nested.push(cu[3]);
    if (isSql(cu[4])) nested.push(cu[4]);
  }
  for (const s of [sql.intersect, sql.except, sql.union]) if (s) nested.push(s);
  return nested;
}

function countComponent1(sql: SpiderSql): number {
  let count = 0;
  if (sql.where.length > 0) count++;
  if (sql.groupBy.length > 0) count++;
  if (sql.orderBy.length > 0) count++;
  if (sql.limit !== null) count++;
  if (sql.from.table_units.length > 0) count += sql.from.table_units.length - 1;
  const ao = [...condOps(sql.from.conds), ...condOps(sql.where), ...condOps(sql.having)];
  count += ao.filter((t) => t === 'or').length;
  const cus = [...condUnits(sql.from.conds), ...condUnits(sql.where), ...condUnits(sql.having)];
  count += cus.filter((cu) => cu[1] === WHERE_OPS.indexOf('like')).length;
  return count;
}

function countComponent2(sql: SpiderSql): number {
  return nestedSqls(sql).length;
}

/**
 * has_agg(unit) is `unit[0] != 0`. The official count_agg also runs it over WHERE and HAVING items, where unit[0] is a
 * condition's NOT flag (so NOT counts as an aggregate) and the 'and'/'or' strings of HAVING count too ('a' != 0).
 */
function hasAgg(unit: unknown): boolean {
  if (typeof unit === 'string') return true;
  const first = (unit as unknown[])[0];
  return typeof first === 'boolean' ? first : first !== 0;
}
const countAgg = (units: readonly unknown[]): number => units.filter(hasAgg).length;

function countOthers(sql: SpiderSql): number {
  let count = 0;
  let agg = countAgg(sql.select[1]);
  agg += countAgg(condUnits(sql.where));
  agg += countAgg(sql.groupBy);
  if (sql.orderBy.length > 0) {
    const units = sql.orderBy[1]!;
    agg += countAgg([...units.map((u) => u[1]).filter(Boolean), ...units.map((u) => u[2]).filter((c) => c !== null)]);
  }
  agg += countAgg(sql.having);
  if (agg > 1) count++;
  if (sql.select[1].length > 1) count++;
  if (sql.where.length > 1) count++;
  if (sql.groupBy.length > 1) count++;
  return count;
}

/** Evaluator.eval_hardness on an already parsed query. */
function hardnessOfParsed(sql: SpiderSql): Hardness {
  const c1 = countComponent1(sql);
  const c2 = countComponent2(sql);
  const others = countOthers(sql);
  if (c1 <= 1 && others === 0 && c2 === 0) return 'easy';
  if ((others <= 2 && c1 <= 1 && c2 === 0) || (c1 <= 2 && others < 2 && c2 === 0)) return 'medium';
  if (
    (others > 2 && c1 <= 2 && c2 === 0) ||
    (c1 > 2 && c1 <= 3 && others <= 2 && c2 === 0) ||
    (c1 <= 1 && others === 0 && c2 <= 1)
  )
    return 'hard';
  return 'extra';
}

type HardnessResult = { hardness: Hardness; error?: undefined } | { hardness: null; error: string };

/**
 * Spider hardness of a query text; `{hardness: null, error}` when the official parser would reject it. Never throws.
 */
export function spiderHardness(sql: string, schema: SpiderSchema): HardnessResult {
  try {
    return { hardness: hardnessOfParsed(parseSpiderSql(schema, sql)) };
  } catch (err) {
    return { hardness: null, error: (err as Error).message };
  }
}
