// What a SQL editor should offer at the cursor: after FROM or JOIN (or a comma in a FROM list) table names; after
// `alias.` or `table.` the columns of the table that alias or name stands for (aliases read from the whole statement,
// so `SELECT t.| FROM trip t` knows t); elsewhere columns and tables, the statement's own tables' columns first.
// Pure text analysis over the tokenizer; completionEntries then picks the schema's names that fit.
import type { SchemaInfo, TableInfo } from '../db/schema/types';
import { isKeyword } from './keywords';
import { splitStatements } from './statements';
import { tokenize, unquoteIdent, type Token } from './tokens';

export type CompletionContext =
  /** A table name is expected (after FROM, JOIN, INTO, UPDATE, TABLE, or a comma in a FROM list). */
  | { kind: 'table' }
  /** After `qualifier.`: the columns of `table` (the alias's table, or the qualifier itself when it is no alias). */
  | { kind: 'column'; qualifier: string; table: string }
  /** Anywhere else: columns (of `tables`, the statement's tables, first) and tables. */
  | { kind: 'any'; tables: string[] };

/** Keywords after which a table name comes. */
const TABLE_BEFORE = new Set(['FROM', 'JOIN', 'INTO', 'UPDATE', 'TABLE']);
/** Keywords that start a clause: walking back from a comma, the first one met says which list the comma is in. */
const CLAUSES = new Set([
  'SELECT',
  'FROM',
  'WHERE',
  'GROUP',
  'ORDER',
  'HAVING',
  'LIMIT',
  'ON',
  'USING',
  'SET',
  'VALUES',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'WINDOW',
  'RETURNING',
]);

const upper = (t: Token | undefined) => (t?.kind === 'word' ? t.text.toUpperCase() : '');
const isName = (t: Token | undefined): t is Token =>
  !!t && ((t.kind === 'word' && !isKeyword(t.text)) || t.kind === 'quoted');
const isPunct = (t: Token | undefined, p: string) => t?.kind === 'punct' && t.text === p;

/** Whether the comma at `i` separates the tables of a FROM list (the clause it is in, at its paren depth, is FROM). */
function commaInFrom(tokens: readonly Token[], i: number): boolean {
  let depth = 0;
  for (let j = i - 1; j >= 0; j--) {
    const t = tokens[j];
    if (isPunct(t, ')')) depth++;
    else if (isPunct(t, '(')) {
      if (depth === 0) return false;
      depth--;
    } else if (depth === 0 && (CLAUSES.has(upper(t)) || upper(t) === 'JOIN')) return upper(t) === 'FROM';
  }
  return false;
}

/** Whether token `i` stands where a table name goes. */
function inTablePosition(tokens: readonly Token[], i: number): boolean {
  const before = tokens[i - 1];
  if (TABLE_BEFORE.has(upper(before))) return true;
  return isPunct(before, ',') && commaInFrom(tokens, i - 1);
}

/** The statement's tables (`FROM a`, `JOIN b`, `, c`) and aliases (`trip t`, `trip AS t`), keys lower-cased. */
export function tableAliases(sql: string): { tables: string[]; aliases: Map<string, string> } {
  const tokens = tokenize(sql);
  const tables: string[] = [];
  const aliases = new Map<string, string>();
  for (let i = 0; i < tokens.length; i++) {
    if (!isName(tokens[i]) || !inTablePosition(tokens, i)) continue;
    let at = i;
    // schema.table: the table is the last name.
    while (isPunct(tokens[at + 1], '.') && isName(tokens[at + 2])) at += 2;
    const table = unquoteIdent(tokens[at].text);
    if (!tables.some((t) => t.toLowerCase() === table.toLowerCase())) tables.push(table);
    aliases.set(table.toLowerCase(), table);
    const next = upper(tokens[at + 1]) === 'AS' ? tokens[at + 2] : tokens[at + 1];
    if (isName(next)) aliases.set(unquoteIdent(next.text).toLowerCase(), table);
    i = at;
  }
  return { tables, aliases };
}

/** What to offer at `offset` in `doc` (a whole document: the statement around the offset is what counts). */
export function completionContext(doc: string, offset: number): CompletionContext {
  const statements = splitStatements(doc);
  // The statement the cursor is in, or right after (still typing it); text before the first one starts at 0.
  let start = 0;
  let end = doc.length;
  for (const s of statements) {
    if (s.start > offset) {
      end = Math.min(end, s.start);
      break;
    }
    start = s.start;
  }
  const semicolon = doc.slice(start, offset).lastIndexOf(';');
  if (semicolon >= 0) start += semicolon + 1;
  const whole = doc.slice(start, end);
  const { tables, aliases } = tableAliases(whole);
  const before = tokenize(doc.slice(start, offset));
  // The word being typed is not part of the context (the editor filters by it).
  let last = before.length - 1;
  const typing = before[last];
  if (
    typing &&
    (typing.kind === 'word' || typing.kind === 'quoted') &&
    typing.start + typing.text.length === offset - start
  )
    last--;
  if (isPunct(before[last], '.') && (before[last - 1]?.kind === 'word' || before[last - 1]?.kind === 'quoted')) {
    const qualifier = unquoteIdent(before[last - 1].text);
    return { kind: 'column', qualifier, table: aliases.get(qualifier.toLowerCase()) ?? qualifier };
  }
  if (last >= 0 && inTablePosition(before, last + 1)) return { kind: 'table' };
  return { kind: 'any', tables };
}

/** One name to offer, as an editor shows it. */
interface CompletionEntry {
  label: string;
  kind: 'table' | 'view' | 'column';
  /** For a column, its table. */
  table?: string;
  /** "table · 9,959 rows", "trip.duration INTEGER". */
  detail: string;
  /** For a table, its columns and types. */
  documentation?: string;
  /** Order: the statement's own tables' columns first. */
  sortText: string;
}

const rowsText = (n: number | null) => `${n === null ? '?' : n.toLocaleString('en-US')} rows`;

/** The names of `schema` that fit `ctx`: tables after FROM/JOIN, one table's columns after `x.`, else all. */
export function completionEntries(schema: SchemaInfo, ctx: CompletionContext): CompletionEntry[] {
  const tableEntry = (t: TableInfo, sortText: string): CompletionEntry => ({
    label: t.name,
    kind: t.kind,
    detail: `${t.kind} · ${rowsText(t.rowCount)}`,
    documentation: t.columns.map((c) => `${c.name} ${c.type}`.trim()).join(', '),
    sortText: `${sortText}${t.name}`,
  });
  const columnEntries = (t: TableInfo, sortText: string): CompletionEntry[] =>
    t.columns.map((c) => ({
      label: c.name,
      kind: 'column',
      table: t.name,
      detail: `${t.name}.${c.name} ${c.type}`.trim(),
      sortText: `${sortText}${c.name}`,
    }));
  if (ctx.kind === 'table') return schema.tables.map((t) => tableEntry(t, '0'));
  if (ctx.kind === 'column') {
    const t = schema.tables.find((x) => x.name.toLowerCase() === ctx.table.toLowerCase());
    return t ? columnEntries(t, '0') : [];
  }
  const own = new Set(ctx.tables.map((t) => t.toLowerCase()));
  return schema.tables.flatMap((t) => [
    tableEntry(t, '1'),
    ...columnEntries(t, own.has(t.name.toLowerCase()) ? '0' : '2'),
  ]);
}
