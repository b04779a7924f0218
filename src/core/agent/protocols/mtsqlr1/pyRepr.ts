// Python reprs for MTSQL-R1's tool messages: its tools are Python, so results print as `str(cursor.fetchall())`
// ("[('america', 4)]") and the memory's "Parsed Elements" as the repr of Spider's parsed-SQL dict.
import type { ExecResult } from '../../../db/types';
import { renderObservation } from '../../../db/observation';
import { pyFloatRepr } from '../../../eval/pyValues';
import type {
  ColUnit,
  Condition,
  CondUnit,
  SpiderSql,
  SpiderValue,
  TableUnit,
  ValUnit,
} from '../../../sql/spider/types';
import { isSql } from '../../../sql/spider/types';

/** Python's repr() of a str. */
export function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += '\\x' + code.toString(16).padStart(2, '0');
    else out += ch;
  }
  return quote + out + quote;
}

/** `str(rows)` of the first `maxRows` rows, as Python's sqlite3 would print them. */
export function pyRows(r: ExecResult, maxRows = Infinity): string {
  const rows = Number.isFinite(maxRows) ? r.rows.slice(0, Math.max(0, maxRows)) : r.rows;
  return renderObservation({ ...r, ok: true, rows }, { format: 'text', textChars: Infinity, maxChars: Infinity });
}

const pyBool = (b: boolean | null): string => (b === null ? 'None' : b ? 'True' : 'False');

function colUnit(c: ColUnit): string {
  return `(${c[0]}, ${pyStr(c[1])}, ${pyBool(c[2])})`;
}

function valUnit(v: ValUnit): string {
  return `(${v[0]}, ${colUnit(v[1])}, ${v[2] ? colUnit(v[2]) : 'None'})`;
}

/** A condition value: Spider parses numbers with float(), so 72 prints as 72.0. */
function value(v: SpiderValue): string {
  if (v === null) return 'None';
  if (typeof v === 'number') return pyFloatRepr(v);
  if (typeof v === 'string') return pyStr(v);
  if (Array.isArray(v)) return colUnit(v);
  return sqlRepr(v);
}

function condUnit(c: CondUnit): string {
  return `(${pyBool(c[0])}, ${c[1]}, ${valUnit(c[2])}, ${value(c[3])}, ${value(c[4])})`;
}

function condition(c: Condition): string {
  return '[' + c.map((x) => (typeof x === 'string' ? pyStr(x) : condUnit(x))).join(', ') + ']';
}

function tableUnit(t: TableUnit): string {
  return t[0] === 'sql' ? `('sql', ${sqlRepr(t[1])})` : `('table_unit', ${pyStr(t[1])})`;
}

function orderBy(o: SpiderSql['orderBy']): string {
  if (o.length === 0) return '[]';
  return `(${pyStr(o[0])}, [${o[1].map(valUnit).join(', ')}])`;
}

function sqlFields(sql: SpiderSql, select: string): string {
  const nested = (s: SpiderSql | null) => (s && isSql(s) ? sqlRepr(s) : 'None');
  return (
    '{' +
    [
      `'from': {'table_units': [${sql.from.table_units.map(tableUnit).join(', ')}], ` +
        `'conds': ${condition(sql.from.conds)}}`,
      `'select': ${select}`,
      `'where': ${condition(sql.where)}`,
      `'groupBy': [${sql.groupBy.map(colUnit).join(', ')}]`,
      `'having': ${condition(sql.having)}`,
      `'orderBy': ${orderBy(sql.orderBy)}`,
      `'limit': ${sql.limit === null ? 'None' : String(sql.limit)}`,
      `'intersect': ${nested(sql.intersect)}`,
      `'union': ${nested(sql.union)}`,
      `'except': ${nested(sql.except)}`,
    ].join(', ') +
    '}'
  );
}

/** The full repr of a Spider SQL dict (process_sql.get_sql), keys in the order it builds them. */
function sqlRepr(sql: SpiderSql): string {
  const [distinct, units] = sql.select;
  return sqlFields(sql, `(${pyBool(distinct)}, [${units.map(([agg, v]) => `(${agg}, ${valUnit(v)})`).join(', ')}])`);
}

/**
 * "Parsed Elements for each term" as App. D's memory prints it: the Spider dict with the top-level `select` cut down to
 * the list of selected column ids (count(*) shows as '__all__', aggregates are dropped) — both traces show exactly
 * that. Nested queries keep Spider's full form, since the traces show none.
 */
export function parsedElements(sql: SpiderSql): string {
  const cols = sql.select[1].flatMap(([, v]) => [v[1][1], ...(v[2] ? [v[2][1]] : [])]);
  return sqlFields(sql, '[' + cols.map(pyStr).join(', ') + ']');
}
