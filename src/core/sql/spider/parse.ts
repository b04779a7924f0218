// process_sql.get_sql: a recursive-descent reading of the token list into the Spider SQL structure. Each function keeps
// the official one's index arithmetic, including where it raises, because a raise decides how a prediction is scored.
import { pyAssert, pyGet, pyIndex, pyFloat, pyInt, SpiderParseError } from './pyErrors';
import type { SpiderSchema } from './schema';
import { spiderTokenize } from './tokenize';
import {
  AGG_OPS,
  CLAUSE_KEYWORDS,
  COND_OPS,
  JOIN_KEYWORDS,
  ORDER_OPS,
  SQL_OPS,
  UNIT_OPS,
  WHERE_OPS,
  type ColUnit,
  type Condition,
  type CondUnit,
  type OrderDirection,
  type SpiderSql,
  type SpiderValue,
  type TableUnit,
  type ValUnit,
} from './types';

type Aliases = Map<string, string>;
const isIn = (list: readonly string[], tok: string): boolean => list.includes(tok);
const isClause = (t: string) => isIn(CLAUSE_KEYWORDS, t);
const isJoinKw = (t: string) => isIn(JOIN_KEYWORDS, t);

class Parser {
  constructor(
    private readonly toks: string[],
    private readonly aliases: Aliases,
    private readonly schema: SpiderSchema,
  ) {}

  private t(i: number): string {
    return pyIndex(this.toks, i);
  }
  private get len(): number {
    return this.toks.length;
  }

  col(toks: string[], start: number, defaultTables?: string[]): [number, string] {
    const tok = pyIndex(toks, start);
    if (tok === '*') return [start + 1, pyGet(this.schema.idMap, tok)];
    if (tok.includes('.')) {
      const parts = tok.split('.');
      if (parts.length !== 2) throw new SpiderParseError('ValueError', `cannot unpack ${JSON.stringify(tok)}`);
      const key = pyGet(this.aliases, parts[0]!) + '.' + parts[1]!;
      return [start + 1, pyGet(this.schema.idMap, key)];
    }
    pyAssert(defaultTables !== undefined && defaultTables.length > 0, 'Default tables should not be None or empty');
    for (const alias of defaultTables) {
      const table = pyGet(this.aliases, alias);
      if (pyGet(this.schema.tables, table).includes(tok))
        return [start + 1, pyGet(this.schema.idMap, table + '.' + tok)];
    }
    throw new SpiderParseError('AssertionError', `Error col: ${tok}`);
  }

  colUnit(toks: string[], start: number, defaultTables?: string[]): [number, ColUnit] {
    let idx = start;
    const len = toks.length;
    let isBlock = false;
    let isDistinct = false;
    if (pyIndex(toks, idx) === '(') {
      isBlock = true;
      idx++;
    }
    if (isIn(AGG_OPS, pyIndex(toks, idx))) {
      const aggId = AGG_OPS.indexOf(pyIndex(toks, idx) as (typeof AGG_OPS)[number]);
      idx++;
      pyAssert(idx < len && toks[idx] === '(');
      idx++;
      if (pyIndex(toks, idx) === 'distinct') {
        idx++;
        isDistinct = true;
      }
      let colId: string;
      [idx, colId] = this.col(toks, idx, defaultTables);
      pyAssert(idx < len && toks[idx] === ')');
      idx++;
      return [idx, [aggId, colId, isDistinct]];
    }
    if (pyIndex(toks, idx) === 'distinct') {
      idx++;
      isDistinct = true;
    }
    // biome-ignore lint/style/useConst: assigned together with idx in one destructuring (the port follows the Python)
    let colId: string;
    [idx, colId] = this.col(toks, idx, defaultTables);
    if (isBlock) {
      pyAssert(pyIndex(toks, idx) === ')');
      idx++;
    }
    return [idx, [0, colId, isDistinct]];
  }

  valUnit(start: number, defaultTables?: string[]): [number, ValUnit] {
    let idx = start;
    let isBlock = false;
    if (this.t(idx) === '(') {
      isBlock = true;
      idx++;
    }
    let unitOp = 0;
    // biome-ignore lint/style/useConst: assigned together with idx in one destructuring (the port follows the Python)
    let c1: ColUnit;
    let c2: ColUnit | null = null;
    [idx, c1] = this.colUnit(this.toks, idx, defaultTables);
    if (idx < this.len && isIn(UNIT_OPS, this.t(idx))) {
      unitOp = UNIT_OPS.indexOf(this.t(idx) as (typeof UNIT_OPS)[number]);
      idx++;
      [idx, c2] = this.colUnit(this.toks, idx, defaultTables);
    }
    if (isBlock) {
      pyAssert(this.t(idx) === ')');
      idx++;
    }
    return [idx, [unitOp, c1, c2]];
  }

  tableUnit(start: number): [number, string, string] {
    let idx = start;
    const key = pyGet(this.aliases, this.t(idx));
    idx += idx + 1 < this.len && this.t(idx + 1) === 'as' ? 3 : 1;
    return [idx, pyGet(this.schema.idMap, key), key];
  }

  value(start: number, defaultTables?: string[]): [number, SpiderValue] {
    let idx = start;
    let isBlock = false;
    let val: SpiderValue;
    if (this.t(idx) === '(') {
      isBlock = true;
      idx++;
    }
    const tok = this.t(idx);
    const num = pyFloat(tok);
    if (tok === 'select') {
      [idx, val] = this.sql(idx);
    } else if (tok.includes('"')) {
      val = tok;
      idx++;
    } else if (num !== null) {
      val = num;
      idx++;
    } else {
      let end = idx;
      while (
        end < this.len &&
        this.toks[end] !== ',' &&
        this.toks[end] !== ')' &&
        this.toks[end] !== 'and' &&
        !isClause(this.toks[end]!) &&
        !isJoinKw(this.toks[end]!)
      )
        end++;
      // From start, not idx: the official slice keeps a leading "(".
      [, val] = this.colUnit(this.toks.slice(start, end), 0, defaultTables);
      idx = end;
    }
    if (isBlock) {
      pyAssert(this.t(idx) === ')');
      idx++;
    }
    return [idx, val];
  }

  condition(start: number, defaultTables?: string[]): [number, Condition] {
    let idx = start;
    const conds: Condition = [];
    while (idx < this.len) {
      let vu: ValUnit;
      [idx, vu] = this.valUnit(idx, defaultTables);
      let notOp = false;
      if (this.t(idx) === 'not') {
        notOp = true;
        idx++;
      }
      pyAssert(idx < this.len && isIn(WHERE_OPS, this.t(idx)), `Error condition: idx: ${idx}, tok: ${this.toks[idx]}`);
      const opId = WHERE_OPS.indexOf(this.t(idx) as (typeof WHERE_OPS)[number]);
      idx++;
      let val1: SpiderValue;
      let val2: SpiderValue = null;
      if (opId === WHERE_OPS.indexOf('between')) {
        [idx, val1] = this.value(idx, defaultTables);
        pyAssert(this.t(idx) === 'and');
        idx++;
        [idx, val2] = this.value(idx, defaultTables);
      } else {
        [idx, val1] = this.value(idx, defaultTables);
      }
      conds.push([notOp, opId, vu, val1, val2] as CondUnit);
      if (
        idx < this.len &&
        (isClause(this.t(idx)) || this.t(idx) === ')' || this.t(idx) === ';' || isJoinKw(this.t(idx)))
      )
        break;
      if (idx < this.len && isIn(COND_OPS, this.t(idx))) {
        conds.push(this.t(idx) as 'and' | 'or');
        idx++;
      }
    }
    return [idx, conds];
  }

  select(start: number, defaultTables: string[]): [number, SpiderSql['select']] {
    let idx = start;
    pyAssert(this.t(idx) === 'select', "'select' not found");
    idx++;
    let isDistinct = false;
    if (idx < this.len && this.t(idx) === 'distinct') {
      idx++;
      isDistinct = true;
    }
    const units: Array<[number, ValUnit]> = [];
    while (idx < this.len && !isClause(this.t(idx))) {
      let agg = 0;
      if (isIn(AGG_OPS, this.t(idx))) {
        agg = AGG_OPS.indexOf(this.t(idx) as (typeof AGG_OPS)[number]);
        idx++;
      }
      let vu: ValUnit;
      [idx, vu] = this.valUnit(idx, defaultTables);
      units.push([agg, vu]);
      if (idx < this.len && this.t(idx) === ',') idx++;
    }
    return [idx, [isDistinct, units]];
  }

  from(start: number): [number, TableUnit[], Condition, string[]] {
    const fromAt = this.toks.indexOf('from', start);
    pyAssert(fromAt >= 0, "'from' not found");
    let idx = fromAt + 1;
    const defaultTables: string[] = [];
    const tableUnits: TableUnit[] = [];
    const conds: Condition = [];
    while (idx < this.len) {
      let isBlock = false;
      if (this.t(idx) === '(') {
        isBlock = true;
        idx++;
      }
      if (this.t(idx) === 'select') {
        let sub: SpiderSql;
        [idx, sub] = this.sql(idx);
        tableUnits.push(['sql', sub]);
      } else {
        if (idx < this.len && this.t(idx) === 'join') idx++;
        let id: string, name: string;
        [idx, id, name] = this.tableUnit(idx);
        tableUnits.push(['table_unit', id]);
        defaultTables.push(name);
      }
      if (idx < this.len && this.t(idx) === 'on') {
        idx++;
        let these: Condition;
        [idx, these] = this.condition(idx, defaultTables);
        if (conds.length > 0) conds.push('and');
        conds.push(...these);
      }
      if (isBlock) {
        pyAssert(this.t(idx) === ')');
        idx++;
      }
      if (idx < this.len && (isClause(this.t(idx)) || this.t(idx) === ')' || this.t(idx) === ';')) break;
    }
    return [idx, tableUnits, conds, defaultTables];
  }

  where(start: number, defaultTables: string[]): [number, Condition] {
    if (start >= this.len || this.t(start) !== 'where') return [start, []];
    return this.condition(start + 1, defaultTables);
  }

  groupBy(start: number, defaultTables: string[]): [number, ColUnit[]] {
    let idx = start;
    const units: ColUnit[] = [];
    if (idx >= this.len || this.t(idx) !== 'group') return [idx, units];
    idx++;
    pyAssert(this.t(idx) === 'by');
    idx++;
    while (idx < this.len && !(isClause(this.t(idx)) || this.t(idx) === ')' || this.t(idx) === ';')) {
      let cu: ColUnit;
      [idx, cu] = this.colUnit(this.toks, idx, defaultTables);
      units.push(cu);
      if (idx < this.len && this.t(idx) === ',') idx++;
      else break;
    }
    return [idx, units];
  }

  orderBy(start: number, defaultTables: string[]): [number, SpiderSql['orderBy']] {
    let idx = start;
    const units: ValUnit[] = [];
    let dir: OrderDirection = 'asc';
    if (idx >= this.len || this.t(idx) !== 'order') return [idx, []];
    idx++;
    pyAssert(this.t(idx) === 'by');
    idx++;
    while (idx < this.len && !(isClause(this.t(idx)) || this.t(idx) === ')' || this.t(idx) === ';')) {
      let vu: ValUnit;
      [idx, vu] = this.valUnit(idx, defaultTables);
      units.push(vu);
      if (idx < this.len && isIn(ORDER_OPS, this.t(idx))) {
        dir = this.t(idx) as OrderDirection;
        idx++;
      }
      if (idx < this.len && this.t(idx) === ',') idx++;
      else break;
    }
    return [idx, [dir, units]];
  }

  having(start: number, defaultTables: string[]): [number, Condition] {
    if (start >= this.len || this.t(start) !== 'having') return [start, []];
    return this.condition(start + 1, defaultTables);
  }

  limit(start: number): [number, number | null] {
    if (start < this.len && this.t(start) === 'limit') return [start + 2, pyInt(this.t(start + 1))];
    return [start, null];
  }

  skipSemicolons(start: number): number {
    let idx = start;
    while (idx < this.len && this.toks[idx] === ';') idx++;
    return idx;
  }

  sql(start: number): [number, SpiderSql] {
    let idx = start;
    let isBlock = false;
    if (this.t(idx) === '(') {
      isBlock = true;
      idx++;
    }
    const [fromEnd, tableUnits, fromConds, defaultTables] = this.from(start);
    const [, select] = this.select(idx, defaultTables);
    idx = fromEnd;
    // biome-ignore lint/style/useConst: assigned together with idx in one destructuring (the port follows the Python)
    let where: Condition, groupBy: ColUnit[], having: Condition, orderBy: SpiderSql['orderBy'], limit: number | null;
    [idx, where] = this.where(idx, defaultTables);
    [idx, groupBy] = this.groupBy(idx, defaultTables);
    [idx, having] = this.having(idx, defaultTables);
    [idx, orderBy] = this.orderBy(idx, defaultTables);
    [idx, limit] = this.limit(idx);
    idx = this.skipSemicolons(idx);
    if (isBlock) {
      pyAssert(this.t(idx) === ')');
      idx++;
    }
    idx = this.skipSemicolons(idx);
    const sql: SpiderSql = {
      select,
      from: { table_units: tableUnits, conds: fromConds },
      where,
      groupBy,
      having,
      orderBy,
      limit,
      intersect: null,
      union: null,
      except: null,
    };
    if (idx < this.len && isIn(SQL_OPS, this.t(idx))) {
      const op = this.t(idx) as (typeof SQL_OPS)[number];
      idx++;
      let sub: SpiderSql;
      [idx, sub] = this.sql(idx);
      sql[op] = sub;
    }
    return [idx, sql];
  }
}

/** scan_alias + get_tables_with_alias: "x as y" anywhere maps y -> x; a table name may not be used as an alias. */
function tablesWithAlias(schema: SpiderSchema, toks: string[]): Aliases {
  const aliases: Aliases = new Map();
  toks.forEach((t, i) => {
    if (t === 'as') aliases.set(pyIndex(toks, i + 1), pyIndex(toks, i - 1));
  });
  for (const table of schema.tables.keys()) {
    pyAssert(!aliases.has(table), `Alias ${table} has the same name in table`);
    aliases.set(table, table);
  }
  return aliases;
}

/** process_sql.get_sql. Throws SpiderParseError wherever the official parser raises. */
export function parseSpiderSql(schema: SpiderSchema, query: string): SpiderSql {
  const toks = spiderTokenize(query);
  const aliases = tablesWithAlias(schema, toks);
  return new Parser(toks, aliases, schema).sql(0)[1];
}
