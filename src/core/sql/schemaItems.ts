// The schema items (tables and columns) a query uses — the sets SQL-Trail's r_schema compares with Jaccard.
// Items are lower-cased: base tables as `t`, columns as `t.c` when the table is known (aliases resolved; unqualified
// names resolved against `schema` when given), else as bare `c`. CTE names and derived tables are not base tables;
// their columns are counted where they come from (inside the CTE or subquery). Output aliases (ORDER BY cnt) and
// double-quoted tokens that name no column (string literals under SQLite's legacy rule) are not items.
import { parseSql } from './parse';
import { walkQuery } from './walk';
import { indexSchema, type SchemaLike } from './schemaLike';
import { tokenize, unquoteIdent } from './tokens';
import { isKeyword } from './keywords';

interface SchemaItems {
  tables: string[];
  columns: string[];
  /** 'parser' normally; 'tokens' when the query did not parse and the token-based fallback produced these sets. */
  method: 'parser' | 'tokens';
  /** The parse error when method is 'tokens'. */
  parseError?: string;
}

export function extractSchemaItems(sql: string, schema?: SchemaLike): SchemaItems {
  const index = indexSchema(schema);
  const parsed = parseSql(sql);
  if (!parsed.ok) return { ...extractByTokens(sql, schema), parseError: parsed.error };
  const tables = new Set<string>();
  const columns = new Set<string>();
  walkQuery(
    parsed.query,
    undefined,
    new Set(),
    { schema: index, subqueries: parsed.subqueries },
    {
      table: (t) => tables.add(t),
      column: (hit) => {
        if (hit.derived || hit.selectAlias) return;
        const column = hit.column.toLowerCase();
        if (hit.table) columns.add(`${hit.table}.${column}`);
        else if (hit.doubleQuoted) return;
        else if (hit.qualifier) columns.add(`${hit.qualifier.toLowerCase()}.${column}`);
        else columns.add(column);
      },
    },
  );
  return { tables: [...tables].sort(), columns: [...columns].sort(), method: 'parser' };
}

/** All of tables and columns as one set, the form r_schema's Jaccard takes. */
/**
 * The items as one set: `table:<name>` and `column:<name>`. Columns are bare names, as SQL-Trail eq. 10 counts them
 * ("the set of schema items (tables and columns) appearing in the prediction"): `SELECT name FROM student` against
 * `SELECT name FROM teacher` shares `name` (1/3), where table-qualified columns would share nothing (0/4).
 */
export function schemaItemSet(items: SchemaItems): Set<string> {
  const bare = (c: string): string => c.slice(c.lastIndexOf('.') + 1);
  return new Set([...items.tables.map((t) => `table:${t}`), ...items.columns.map((c) => `column:${bare(c)}`)]);
}

const TABLE_INTRO = new Set(['FROM', 'JOIN']);
const CLAUSE_END = new Set([
  'WHERE',
  'GROUP',
  'ORDER',
  'HAVING',
  'LIMIT',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'ON',
  'USING',
  'JOIN',
  'INNER',
  'LEFT',
  'RIGHT',
  'CROSS',
  'NATURAL',
  'FULL',
  'OUTER',
  'WINDOW',
]);

/**
 * Best effort for text the parser rejects: names after FROM/JOIN (and commas in a FROM list) are tables, `x AS a`
 * or `x a` define aliases, qualified names resolve through them, and other bare words that are neither keywords nor
 * function calls are columns (kept only if some table of `schema` has them, when a schema is given).
 */
export function extractByTokens(sql: string, schema?: SchemaLike): SchemaItems {
  const index = indexSchema(schema);
  const toks = tokenize(sql);
  const name = (i: number) => {
    const t = toks[i];
    return t && (t.kind === 'word' || t.kind === 'quoted') && !(t.kind === 'word' && isKeyword(t.text))
      ? unquoteIdent(t.text)
      : undefined;
  };
  const tables = new Set<string>();
  const aliases = new Map<string, string>();
  const tableTokens = new Set<number>();
  let inFrom = false;
  for (let i = 0; i < toks.length; i++) {
    const up = toks[i].kind === 'word' ? toks[i].text.toUpperCase() : '';
    if (TABLE_INTRO.has(up)) inFrom = true;
    else if (CLAUSE_END.has(up) || toks[i].text === ')') inFrom = up === 'JOIN';
    const startsTable = TABLE_INTRO.has(up) || (inFrom && toks[i].text === ',');
    const t = startsTable ? name(i + 1) : undefined;
    if (!t || toks[i + 2]?.text === '(') continue;
    const table = t.toLowerCase();
    tables.add(table);
    tableTokens.add(i + 1);
    let j = i + 2;
    if (toks[j]?.kind === 'word' && toks[j].text.toUpperCase() === 'AS') j++;
    const alias = name(j);
    if (alias) {
      aliases.set(alias.toLowerCase(), table);
      tableTokens.add(j);
    }
  }
  const columns = new Set<string>();
  for (let i = 0; i < toks.length; i++) {
    if (tableTokens.has(i) || toks[i].kind === 'string') continue;
    const n = name(i);
    if (!n || toks[i + 1]?.text === '(' || toks[i - 1]?.text === '.') continue;
    if (toks[i - 1]?.kind === 'word' && toks[i - 1].text.toUpperCase() === 'AS') continue;
    if (toks[i + 1]?.text === '.' && name(i + 2)) {
      const q = n.toLowerCase();
      const c = (name(i + 2) as string).toLowerCase();
      columns.add(`${aliases.get(q) ?? q}.${c}`);
      i += 2;
      continue;
    }
    const col = n.toLowerCase();
    if (index) {
      const owner = [...tables].find((t) => index.get(t)?.has(col));
      if (owner) columns.add(`${owner}.${col}`);
    } else if (toks[i].kind !== 'quoted' || toks[i].text[0] !== '"') {
      columns.add(col);
    }
  }
  return { tables: [...tables].sort(), columns: [...columns].sort(), method: 'tokens' };
}
