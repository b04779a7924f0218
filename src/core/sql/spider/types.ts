// The Spider SQL structure of the official process_sql.py, one TS tuple per Python tuple so that equality and
// ordering follow Python's (see pyCompare.ts). Ids are strings: "__all__", "__table__", "__table.column__".

export const CLAUSE_KEYWORDS = [
  'select',
  'from',
  'where',
  'group',
  'order',
  'limit',
  'intersect',
  'union',
  'except',
] as const;
export const JOIN_KEYWORDS = ['join', 'on', 'as'] as const;
export const WHERE_OPS = ['not', 'between', '=', '>', '<', '>=', '<=', '!=', 'in', 'like', 'is', 'exists'] as const;
export const UNIT_OPS = ['none', '-', '+', '*', '/'] as const;
export const AGG_OPS = ['none', 'max', 'min', 'count', 'sum', 'avg'] as const;
export const COND_OPS = ['and', 'or'] as const;
export const SQL_OPS = ['intersect', 'union', 'except'] as const;
export const ORDER_OPS = ['desc', 'asc'] as const;

/** (agg_id, col_id, isDistinct); the evaluator sets isDistinct to None (null) when it ignores DISTINCT. */
export type ColUnit = [aggId: number, colId: string, isDistinct: boolean | null];
/** (unit_op, col_unit1, col_unit2) */
export type ValUnit = [unitOp: number, colUnit1: ColUnit, colUnit2: ColUnit | null];
/** A condition value: a number, a quoted string token, a nested query, a column, or None once values are dropped. */
export type SpiderValue = number | string | SpiderSql | ColUnit | null;
/** (not_op, op_id, val_unit, val1, val2) */
export type CondUnit = [notOp: boolean, opId: number, valUnit: ValUnit, val1: SpiderValue, val2: SpiderValue];
/** [cond_unit1, 'and'/'or', cond_unit2, ...] */
export type Condition = Array<CondUnit | 'and' | 'or'>;
export type TableUnit = ['sql', SpiderSql] | ['table_unit', string];
export type OrderDirection = 'asc' | 'desc';

export interface SpiderSql {
  /** (isDistinct, [(agg_id, val_unit), ...]); isDistinct is null once DISTINCT is ignored. */
  select: [isDistinct: boolean | null, units: Array<[aggId: number, valUnit: ValUnit]>];
  from: { table_units: TableUnit[]; conds: Condition };
  where: Condition;
  groupBy: ColUnit[];
  /** [] when there is no ORDER BY, as in Python. */
  orderBy: [] | [direction: OrderDirection, units: ValUnit[]];
  having: Condition;
  limit: number | null;
  intersect: SpiderSql | null;
  except: SpiderSql | null;
  union: SpiderSql | null;
}

export function isSql(v: unknown): v is SpiderSql {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The query the official evaluator scores in place of a prediction it cannot parse. */
export function emptySql(): SpiderSql {
  return {
    except: null,
    from: { conds: [], table_units: [] },
    groupBy: [],
    having: [],
    intersect: null,
    limit: null,
    orderBy: [],
    select: [false, []],
    union: null,
    where: [],
  };
}
