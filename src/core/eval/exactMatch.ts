// Spider's exact-set match (EM) as the official evaluation.py scores one (gold, prediction) pair with `--etype match`:
// values dropped (DISABLE_VALUE), DISTINCT dropped (DISABLE_DISTINCT), foreign-key columns unified, then every
// partial component must score f1 = 1 and the FROM table lists must be equal as sorted lists.
import { parseSpiderSql } from '../sql/spider/parse';
import type { SpiderSchema } from '../sql/spider/schema';
import type { ForeignKeyMap } from '../sql/spider/foreignKeys';
import { pyContains, pyEqual, pyRemove, sortTableUnits } from '../sql/spider/pyCompare';
import {
  WHERE_OPS,
  emptySql,
  isSql,
  type ColUnit,
  type Condition,
  type CondUnit,
  type SpiderSql,
  type SpiderValue,
  type TableUnit,
  type ValUnit,
} from '../sql/spider/types';

/** The official print order of hardness levels (the score table's columns). */
export const spiderHardnessOrder = ['easy', 'medium', 'hard', 'extra', 'all'] as const;

/** The partial-match components, named and ordered as the official script prints them. */
export const SPIDER_PARTIAL_COMPONENTS = [
  'select',
  'select(no AGG)',
  'where',
  'where(no OP)',
  'group(no Having)',
  'group',
  'order',
  'and/or',
  'IUEN',
  'keywords',
] as const;
type SpiderPartialComponent = (typeof SPIDER_PARTIAL_COMPONENTS)[number];

interface PartialScore {
  acc: number;
  rec: number;
  f1: number;
  labelCount: number;
  predCount: number;
}
type PartialScores = Record<SpiderPartialComponent, PartialScore>;

interface ExactMatchResult {
  match: boolean;
  /** Per-component scores; absent only when the gold query itself cannot be parsed. */
  partial?: PartialScores;
  /** Why the prediction did not parse; it was then scored as the official empty query (so never matches). */
  predParseError?: string;
  /** The gold query did not parse (the official script would stop); match is false. */
  goldParseError?: string;
  /** The official script would crash on this pair (e.g. two different FROM subqueries to sort); match is false. */
  error?: string;
}

const units = (c: Condition): CondUnit[] => c.filter((_, i) => i % 2 === 0) as CondUnit[];
const ops = (c: Condition): Array<'and' | 'or'> => c.filter((_, i) => i % 2 === 1) as Array<'and' | 'or'>;

// ---- rebuild_sql_val: condition values become None unless they are subqueries (whose values go too)
function dropValue(v: SpiderValue): SpiderValue {
  return isSql(v) ? dropValues(v) : null;
}
function dropCondValues(c: Condition): Condition {
  return c.map((it, i) =>
    i % 2 === 0
      ? ([...(it as CondUnit).slice(0, 3), dropValue((it as CondUnit)[3]), dropValue((it as CondUnit)[4])] as CondUnit)
      : it,
  );
}
function dropValues(sql: SpiderSql): SpiderSql {
  return {
    ...sql,
    from: { ...sql.from, conds: dropCondValues(sql.from.conds) },
    having: dropCondValues(sql.having),
    where: dropCondValues(sql.where),
    intersect: sql.intersect && dropValues(sql.intersect),
    except: sql.except && dropValues(sql.except),
    union: sql.union && dropValues(sql.union),
  };
}

// ---- build_valid_col_units + rebuild_sql_col
/** Column ids of the tables named in FROM (subqueries contribute none). */
function validColUnits(tableUnits: TableUnit[], schema: SpiderSchema): Set<string> {
  const prefixes = new Set(tableUnits.filter((t) => t[0] === 'table_unit').map((t) => (t[1] as string).slice(0, -2)));
  const valid = new Set<string>();
  for (const v of schema.idMap.values()) if (v.includes('.') && prefixes.has(v.slice(0, v.indexOf('.')))) valid.add(v);
  return valid;
}

function rebuildColUnit(valid: Set<string>, cu: ColUnit | null, kmap: ForeignKeyMap): ColUnit | null {
  if (cu === null) return null;
  const [agg, col] = cu;
  return [agg, kmap.has(col) && valid.has(col) ? kmap.get(col)! : col, null];
}
function rebuildValUnit(valid: Set<string>, vu: ValUnit, kmap: ForeignKeyMap): ValUnit {
  return [vu[0], rebuildColUnit(valid, vu[1], kmap)!, rebuildColUnit(valid, vu[2], kmap)];
}
// Only the left-hand side is rebuilt; subqueries used as values keep their columns and DISTINCT, as officially.
function rebuildCondCols(valid: Set<string>, c: Condition, kmap: ForeignKeyMap): Condition {
  return c.map((it, i) => {
    if (i % 2 !== 0) return it;
    const [not, op, vu, v1, v2] = it as CondUnit;
    return [not, op, rebuildValUnit(valid, vu, kmap), v1, v2] as CondUnit;
  });
}
/** rebuild_sql_col; INTERSECT/UNION/EXCEPT parts are rebuilt with the outer query's valid columns, as officially. */
function rebuildColumns(valid: Set<string>, sql: SpiderSql, kmap: ForeignKeyMap): SpiderSql {
  return {
    ...sql,
    select: [null, sql.select[1].map(([agg, vu]) => [agg, rebuildValUnit(valid, vu, kmap)] as [number, ValUnit])],
    // Table units hold an id string or a subquery, never a column tuple, so the official rebuild leaves them as they
    // are.
    from: { table_units: sql.from.table_units, conds: rebuildCondCols(valid, sql.from.conds, kmap) },
    where: rebuildCondCols(valid, sql.where, kmap),
    groupBy: sql.groupBy.map((cu) => rebuildColUnit(valid, cu, kmap)!),
    orderBy:
      sql.orderBy.length === 0 ? [] : [sql.orderBy[0], sql.orderBy[1].map((vu) => rebuildValUnit(valid, vu, kmap))],
    having: rebuildCondCols(valid, sql.having, kmap),
    intersect: sql.intersect && rebuildColumns(valid, sql.intersect, kmap),
    except: sql.except && rebuildColumns(valid, sql.except, kmap),
    union: sql.union && rebuildColumns(valid, sql.union, kmap),
  };
}

/** What evaluate() does to a parsed query before comparing: values, then columns. */
function normalizeForMatch(sql: SpiderSql, schema: SpiderSchema, kmap: ForeignKeyMap): SpiderSql {
  const valid = validColUnits(sql.from.table_units, schema);
  return rebuildColumns(valid, dropValues(sql), kmap);
}

// ---- component scores
type Counts = [label: number, pred: number, cnt: number];

function scores(cnt: number, pred: number, label: number): [number, number, number] {
  if (pred !== label) return [0, 0, 0];
  return cnt === pred ? [1, 1, 1] : [0, 0, 0];
}

function evalSel(pred: SpiderSql, label: SpiderSql): [number, number, number, number] {
  const predSel = pred.select[1];
  const labelSel = [...label.select[1]];
  const labelWoAgg: unknown[] = labelSel.map((u) => u[1]);
  let cnt = 0,
    cntWoAgg = 0;
  const labelTotal = labelSel.length;
  for (const unit of predSel) {
    if (pyContains(labelSel, unit)) {
      cnt++;
      pyRemove(labelSel, unit);
    }
    if (pyContains(labelWoAgg, unit[1])) {
      cntWoAgg++;
      pyRemove(labelWoAgg, unit[1]);
    }
  }
  return [labelTotal, predSel.length, cnt, cntWoAgg];
}

function evalWhere(pred: SpiderSql, label: SpiderSql): [number, number, number, number] {
  const predConds = units(pred.where);
  const labelConds: unknown[] = units(label.where);
  const labelWoAgg: unknown[] = units(label.where).map((u) => u[2]);
  const labelTotal = labelConds.length;
  let cnt = 0,
    cntWoAgg = 0;
  for (const unit of predConds) {
    if (pyContains(labelConds, unit)) {
      cnt++;
      pyRemove(labelConds, unit);
    }
    if (pyContains(labelWoAgg, unit[2])) {
      cntWoAgg++;
      pyRemove(labelWoAgg, unit[2]);
    }
  }
  return [labelTotal, predConds.length, cnt, cntWoAgg];
}

function evalGroup(pred: SpiderSql, label: SpiderSql): Counts {
  // Compared by the text after the first "." of the id ("name__"), so the table does not matter here.
  const afterDot = (id: string) => (id.includes('.') ? id.split('.')[1]! : id);
  const predCols = pred.groupBy.map((u) => afterDot(u[1]));
  const labelCols = label.groupBy.map((u) => afterDot(u[1]));
  const labelTotal = labelCols.length;
  let cnt = 0;
  for (const c of predCols) {
    const i = labelCols.indexOf(c);
    if (i >= 0) {
      cnt++;
      labelCols.splice(i, 1);
    }
  }
  return [labelTotal, predCols.length, cnt];
}

function evalHaving(pred: SpiderSql, label: SpiderSql): Counts {
  const predTotal = pred.groupBy.length > 0 ? 1 : 0;
  const labelTotal = label.groupBy.length > 0 ? 1 : 0;
  const same =
    predTotal === 1 &&
    labelTotal === 1 &&
    pyEqual(
      pred.groupBy.map((u) => u[1]),
      label.groupBy.map((u) => u[1]),
    ) &&
    pyEqual(pred.having, label.having);
  return [labelTotal, predTotal, same ? 1 : 0];
}

function evalOrder(pred: SpiderSql, label: SpiderSql): Counts {
  const predTotal = pred.orderBy.length > 0 ? 1 : 0;
  const labelTotal = label.orderBy.length > 0 ? 1 : 0;
  // LIMIT counts only by presence: its number is never compared.
  const same =
    label.orderBy.length > 0 &&
    pyEqual(pred.orderBy, label.orderBy) &&
    (pred.limit === null) === (label.limit === null);
  return [labelTotal, predTotal, same ? 1 : 0];
}

function evalAndOr(pred: SpiderSql, label: SpiderSql): Counts {
  const p = new Set(ops(pred.where));
  const l = new Set(ops(label.where));
  if (p.size === l.size && [...p].every((x) => l.has(x))) return [1, 1, 1];
  // The official function returns (len(pred), len(label), 0) into (label_total, pred_total, cnt): kept as is.
  return [p.size, l.size, 0];
}

function evalNested(pred: SpiderSql | null, label: SpiderSql | null): Counts {
  const cnt = pred !== null && label !== null && exactMatchOfNormalized(pred, label) ? 1 : 0;
  return [label !== null ? 1 : 0, pred !== null ? 1 : 0, cnt];
}

function evalIUEN(pred: SpiderSql, label: SpiderSql): Counts {
  const parts = (['intersect', 'except', 'union'] as const).map((k) => evalNested(pred[k], label[k]));
  return [0, 1, 2].map((i) => parts.reduce((s, p) => s + p[i]!, 0)) as Counts;
}

function keywords(sql: SpiderSql): Set<string> {
  const res = new Set<string>();
  if (sql.where.length > 0) res.add('where');
  if (sql.groupBy.length > 0) res.add('group');
  if (sql.having.length > 0) res.add('having');
  if (sql.orderBy.length > 0) {
    res.add(sql.orderBy[0]!);
    res.add('order');
  }
  if (sql.limit !== null) res.add('limit');
  if (sql.except !== null) res.add('except');
  if (sql.union !== null) res.add('union');
  if (sql.intersect !== null) res.add('intersect');
  const ao = [...ops(sql.from.conds), ...ops(sql.where), ...ops(sql.having)];
  if (ao.includes('or')) res.add('or');
  const cus = [...units(sql.from.conds), ...units(sql.where), ...units(sql.having)];
  if (cus.some((cu) => cu[0])) res.add('not');
  if (cus.some((cu) => cu[1] === WHERE_OPS.indexOf('in'))) res.add('in');
  if (cus.some((cu) => cu[1] === WHERE_OPS.indexOf('like'))) res.add('like');
  return res;
}

function evalKeywords(pred: SpiderSql, label: SpiderSql): Counts {
  const p = keywords(pred);
  const l = keywords(label);
  return [l.size, p.size, [...p].filter((k) => l.has(k)).length];
}

/** Evaluator.eval_partial_match on normalized queries. */
function partialMatch(pred: SpiderSql, label: SpiderSql): PartialScores {
  const res = {} as PartialScores;
  const put = (name: SpiderPartialComponent, cnt: number, predTotal: number, labelTotal: number) => {
    const [acc, rec, f1] = scores(cnt, predTotal, labelTotal);
    res[name] = { acc, rec, f1, labelCount: labelTotal, predCount: predTotal };
  };
  const [sl, sp, sc, sw] = evalSel(pred, label);
  put('select', sc, sp, sl);
  put('select(no AGG)', sw, sp, sl);
  const [wl, wp, wc, ww] = evalWhere(pred, label);
  put('where', wc, wp, wl);
  put('where(no OP)', ww, wp, wl);
  for (const [name, f] of [
    ['group(no Having)', evalGroup],
    ['group', evalHaving],
    ['order', evalOrder],
    ['and/or', evalAndOr],
    ['IUEN', evalIUEN],
    ['keywords', evalKeywords],
  ] as const) {
    const [l, p, c] = f(pred, label);
    put(name, c, p, l);
  }
  return res;
}

/** Evaluator.eval_exact_match on normalized queries. May throw where Python would (sorting unequal subqueries). */
function exactMatchOfNormalized(pred: SpiderSql, label: SpiderSql, partial = partialMatch(pred, label)): boolean {
  if (Object.values(partial).some((s) => s.f1 !== 1)) return false;
  if (label.from.table_units.length > 0) {
    return pyEqual(sortTableUnits(label.from.table_units), sortTableUnits(pred.from.table_units));
  }
  return true;
}

interface ExactMatchOptions {
  /** The official evaluate() replaces " value " with " 1 " in every prediction before parsing; default true. */
  replaceValuePlaceholder?: boolean;
}

/**
 * Spider exact-set match of one prediction against its gold query on the gold's database.
 * `schema` from loadSpiderSchema(dbPath); `fkMap` from foreignKeyMaps(tablesJson).get(dbId) (an empty map if unknown).
 * Never throws.
 */
export function exactSetMatch(
  goldSql: string,
  predSql: string,
  schema: SpiderSchema,
  fkMap: ForeignKeyMap,
  opts: ExactMatchOptions = {},
): ExactMatchResult {
  let gold: SpiderSql;
  try {
    gold = parseSpiderSql(schema, goldSql);
  } catch (err) {
    return { match: false, goldParseError: (err as Error).message };
  }
  const predText = opts.replaceValuePlaceholder === false ? predSql : predSql.replaceAll(' value ', ' 1 ');
  let pred: SpiderSql;
  let predParseError: string | undefined;
  try {
    pred = parseSpiderSql(schema, predText);
  } catch (err) {
    pred = emptySql();
    predParseError = (err as Error).message;
  }
  const g = normalizeForMatch(gold, schema, fkMap);
  const p = normalizeForMatch(pred, schema, fkMap);
  let partial: PartialScores | undefined;
  try {
    partial = partialMatch(p, g);
    const match = exactMatchOfNormalized(p, g, partial);
    return predParseError === undefined ? { match, partial } : { match, partial, predParseError };
  } catch (err) {
    return {
      match: false,
      ...(partial ? { partial } : {}),
      error: (err as Error).message,
      ...(predParseError ? { predParseError } : {}),
    };
  }
}
