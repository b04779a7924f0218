// Parsing with node-sql-parser's SQLite grammar, wrapped so nothing throws out of this module.
//
// The grammar (node-sql-parser 5.4) rejects INTERSECT and EXCEPT, which ~6% of Spider's gold queries use. Rather than
// rewrite the query text, we split on those operators ourselves (tokenizer-aware, so strings and parentheses are
// respected) and parse each side:
//   R1. top level: `A INTERSECT B EXCEPT C` → parse A, B, C separately; combine left to right into set nodes.
// R2. nested: a parenthesised `(SELECT … INTERSECT …)` inside a query is replaced by `(SELECT * FROM __quarry_sub_N)`,
//       its text parsed on its own (recursively), and the placeholder mapped back by the walkers in this folder.
//   R3. trailing semicolons are dropped (some grammars choke on `;;`).
//   R4. [bracketed] identifiers (SQLite accepts them, the grammar does not) become "double-quoted".
//   R5. backslashes inside 'strings' are doubled: the grammar reads `\` as an escape, SQLite does not, so
//       `LIKE '%\_%' ESCAPE '\'` would otherwise not parse. The grammar keeps escapes raw, so string values in the
//       AST (and in clause strings) then show each backslash doubled — consistently, so comparisons are unaffected.
//   R6. unquoted names with letters beyond ASCII (`flughäfen`, `größe`: SQLite accepts them, the grammar stops at the
//       first such letter) become `backquoted`, which the grammar reads as the same name.
// Every rewrite applied is listed in `rewrites`, so callers can tell a clean parse from a patched one.
// The SQLite-only build (about 0.2 MB) instead of the package's main entry, which carries every dialect (4 MB).
import { Parser } from 'node-sql-parser/build/sqlite';
import { tokenize, type Token } from './tokens';

export type SetOp = 'union' | 'union all' | 'intersect' | 'except';

/** A node-sql-parser SELECT AST (its own typings are loose, so we keep it as a record). */
export type SelectAst = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export type QueryNode =
  | { kind: 'select'; ast: SelectAst }
  | { kind: 'set'; op: SetOp; left: QueryNode; right: QueryNode };

interface ParsedQuery {
  ok: true;
  query: QueryNode;
  /** Queries cut out by rewrite R2, by placeholder table name (`__quarry_sub_0`…). */
  subqueries: Map<string, QueryNode>;
  /** Human-readable notes of the rewrites applied (empty for a clean parse). */
  rewrites: string[];
}

interface ParseFailure {
  ok: false;
  error: string;
}

type ParseResult = ParsedQuery | ParseFailure;

export const SUBQUERY_PLACEHOLDER = /^__quarry_sub_\d+$/;

const parser = new Parser();
const OPT = { database: 'sqlite' };

/** Parses one SELECT statement (with WITH, set operations and subqueries). Never throws. */
export function parseSql(sql: string): ParseResult {
  const ctx = { subqueries: new Map<string, QueryNode>(), rewrites: [] as string[] };
  try {
    let text = sql.trim();
    if (/;\s*$/.test(text)) {
      text = text.replace(/(\s*;)+\s*$/, '');
      ctx.rewrites.push('R3 trailing semicolon dropped');
    }
    if (text === '') return { ok: false, error: 'empty query' };
    text = rewriteTokens(text, ctx.rewrites);
    return { ok: true, query: parseQueryText(text, ctx), subqueries: ctx.subqueries, rewrites: ctx.rewrites };
  } catch (err) {
    return { ok: false, error: (err as Error)?.message ?? String(err) };
  }
}

/** Rewrites R4 to R6, token by token so nothing inside other strings or names is touched. */
function rewriteTokens(text: string, notes: string[]): string {
  let out = '';
  let last = 0;
  let brackets = 0;
  let backslashes = 0;
  let unicodeNames = 0;
  for (const t of tokenize(text)) {
    let replacement: string | undefined;
    if (t.kind === 'quoted' && t.text.startsWith('[')) {
      replacement = `"${t.text.slice(1, t.text.endsWith(']') ? -1 : undefined).replace(/"/g, '""')}"`;
      brackets++;
    } else if (t.kind === 'string' && t.text.includes('\\')) {
      replacement = t.text.replace(/\\/g, '\\\\');
      backslashes++;
    } else if (t.kind === 'word' && /[^\x00-\x7f]/.test(t.text)) {
      replacement = `\`${t.text}\``;
      unicodeNames++;
    }
    if (replacement === undefined) continue;
    out += text.slice(last, t.start) + replacement;
    last = t.start + t.text.length;
  }
  if (brackets > 0) notes.push(`R4 ${brackets} [bracketed] names double-quoted`);
  if (backslashes > 0) notes.push(`R5 backslashes doubled in ${backslashes} strings`);
  if (unicodeNames > 0) notes.push(`R6 ${unicodeNames} names beyond ASCII backquoted`);
  return last === 0 ? text : out + text.slice(last);
}

interface Ctx {
  subqueries: Map<string, QueryNode>;
  rewrites: string[];
}

function parseQueryText(text: string, ctx: Ctx): QueryNode {
  const tokens = tokenize(text);
  const cuts = setOperatorsAtDepth0(tokens, ['INTERSECT', 'EXCEPT']);
  if (cuts.length > 0) {
    ctx.rewrites.push(`R1 split at top-level ${cuts.map((c) => c.op.toUpperCase()).join(', ')}`);
    let start = 0;
    let node: QueryNode | undefined;
    let op: SetOp | undefined;
    for (const cut of [...cuts, { at: text.length, end: text.length, op: undefined }]) {
      const part = parseQueryText(text.slice(start, cut.at).trim(), ctx);
      node = node && op ? { kind: 'set', op, left: node, right: part } : part;
      op = cut.op;
      start = cut.end;
    }
    return node as QueryNode;
  }
  const replaced = cutNestedSetQueries(text, tokens, ctx);
  const ast = parser.astify(replaced, OPT) as unknown;
  const stmt = Array.isArray(ast) ? (ast.length === 1 ? ast[0] : undefined) : ast;
  if (!stmt) throw new Error('expected exactly one statement');
  if ((stmt as SelectAst).type !== 'select') throw new Error(`not a SELECT statement (${(stmt as SelectAst).type})`);
  return fromAst(stmt as SelectAst);
}

/** Turns node-sql-parser's `_next`/`set_op` chain into set nodes, keeping the order of the arms. */
export function fromAst(ast: SelectAst): QueryNode {
  if (!ast._next) return { kind: 'select', ast };
  const op = String(ast.set_op ?? 'union').toLowerCase() as SetOp;
  const { _next: next, set_op: _drop, ...head } = ast;
  void _drop;
  return { kind: 'set', op, left: { kind: 'select', ast: head }, right: fromAst(next as SelectAst) };
}

interface Cut {
  at: number;
  end: number;
  op: SetOp;
}

/** Positions of the given set operators outside all parentheses. */
function setOperatorsAtDepth0(tokens: Token[], ops: string[]): Cut[] {
  const cuts: Cut[] = [];
  let depth = 0;
  for (const t of tokens) {
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0 && t.kind === 'word' && ops.includes(t.text.toUpperCase())) {
      cuts.push({ at: t.start, end: t.start + t.text.length, op: t.text.toLowerCase() as SetOp });
    }
  }
  return cuts;
}

/** Rewrite R2: `( SELECT … INTERSECT|EXCEPT … )` spans become placeholders, innermost parsed by recursion. */
function cutNestedSetQueries(text: string, tokens: Token[], ctx: Ctx): string {
  const spans: { from: number; to: number }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].text !== '(' || !/^(select|with)$/i.test(tokens[i + 1]?.text ?? '')) continue;
    let depth = 0;
    let hasSetOp = false;
    let j = i;
    for (; j < tokens.length; j++) {
      if (tokens[j].text === '(') depth++;
      else if (tokens[j].text === ')') {
        depth--;
        if (depth === 0) break;
      } else if (depth === 1 && /^(intersect|except)$/i.test(tokens[j].text) && tokens[j].kind === 'word')
        hasSetOp = true;
    }
    if (hasSetOp && j < tokens.length) {
      spans.push({ from: tokens[i].start, to: tokens[j].start + 1 });
      i = j;
    }
  }
  if (spans.length === 0) return text;
  let out = '';
  let last = 0;
  for (const s of spans) {
    const name = `__quarry_sub_${ctx.subqueries.size}`;
    ctx.subqueries.set(name, parseQueryText(text.slice(s.from + 1, s.to - 1).trim(), ctx));
    ctx.rewrites.push(`R2 nested set query cut out as ${name}`);
    out += text.slice(last, s.from) + `(SELECT * FROM ${name})`;
    last = s.to;
  }
  return out + text.slice(last);
}

/** The SQL text of an expression or statement AST, in node-sql-parser's spelling (quoted names). */
export function astToSql(node: unknown): string {
  return (parser as unknown as { exprToSQL(e: unknown, o: unknown): string }).exprToSQL(node, OPT);
}

/** The SQL text of a whole SELECT AST. */
export function selectToSql(ast: SelectAst): string {
  return parser.sqlify(ast as never, OPT);
}
