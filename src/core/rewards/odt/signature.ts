// Feature normalisation (App. D, "Feature Normalization"): the comparable text of an expression or a predicate.
//   - names lower-cased, quotation marks removed (aliases were already resolved to table names by build.ts);
//   - string and numeric literals become `?`; an IN list made only of literals becomes `(?)` (its length is a value
//     detail, not structure);
//   - predicates with =, <>, !=, >=, <=, >, <, LIKE, IN, BETWEEN, IS NULL, IS NOT NULL get one canonical spelling
//     (`!=` is `<>`, `==` is `=`, a literal on the left moves to the right with the operator mirrored);
//   - `a = b` with identifiers on both sides has its operands sorted, so a=b and b=a are one signature;
//   - conjunctions are split at AND into sets of atomic predicates.
// Nested queries are not part of a signature: build.ts has replaced each by SUBQUERY_MARK (they are child nodes).
import { astToSql } from '../../sql/parse';
import { tokenize, unquoteIdent, type Token } from '../../sql/tokens';
import { isKeyword } from '../../sql/keywords';

type Ast = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The column name build.ts puts where a nested query was; signatures print it as `(subquery)`. */
export const SUBQUERY_MARK = '__odt_subquery__';

const LITERAL_TYPES = new Set([
  'number',
  'single_quote_string',
  'double_quote_string',
  'string',
  'bool',
  'boolean',
  'hex_string',
  'full_hex_string',
  'natural_string',
  'bit_string',
  'date',
  'datetime',
  'time',
  'timestamp',
]);

function isLiteral(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  const o = e as Ast;
  if (LITERAL_TYPES.has(o.type)) return true;
  // -3 and +3 as unary expressions over a number
  return o.type === 'unary_expr' && (o.operator === '-' || o.operator === '+') && isLiteral(o.expr);
}

function columnOf(ref: Ast): string {
  const c = ref.column;
  if (typeof c === 'string') return c;
  return String(c?.expr?.value ?? c?.value ?? '');
}

/** A column reference's signature: `table.column` (or the bare column when no table is known), lower-cased. */
function columnSignature(ref: Ast): string {
  const column = columnOf(ref);
  if (column === SUBQUERY_MARK) return '(subquery)';
  const name = column === '*' ? '*' : identifier(column);
  return typeof ref.table === 'string' && ref.table !== '' ? `${identifier(ref.table)}.${name}` : name;
}

function identifier(name: string): string {
  const lower = name.toLowerCase();
  return /^[a-z_][a-z0-9_$]*$/.test(lower) ? lower : `"${lower.replace(/"/g, '""')}"`;
}

/** The normalised text of any expression. */
export function exprSignature(e: unknown): string {
  if (e === null || e === undefined) return '';
  if (typeof e !== 'object') return String(e).toLowerCase();
  const o = e as Ast;
  if (o.type === 'column_ref') return columnSignature(o);
  if (isLiteral(o)) return '?';
  if (o.type === 'star') return '*';
  if (o.type === 'null') return 'null';
  return textSignature(astToSql(o));
}

/** Token-level normalisation of printed SQL: literals to `?`, names unquoted and lower-cased, tight punctuation. */
function textSignature(sql: string): string {
  const out: string[] = [];
  let prev: Token | undefined;
  for (const t of tokenize(sql)) {
    // a function call's parenthesis stays glued to its name: avg(x), not avg (x)
    if (t.text === '(' && prev?.kind === 'word' && !isKeyword(prev.text) && out.length > 0) {
      out[out.length - 1] += '(';
      prev = t;
      continue;
    }
    prev = t;
    if (t.kind === 'string' || t.kind === 'number') out.push('?');
    else if (t.kind === 'quoted') {
      const name = unquoteIdent(t.text);
      out.push(name === SUBQUERY_MARK ? '(subquery)' : identifier(name));
    } else out.push(t.text.toLowerCase());
  }
  return out
    .join(' ')
    .replace(/ ?\. ?/g, '.')
    .replace(/\( /g, '(')
    .replace(/ \)/g, ')')
    .replace(/ ,/g, ',')
    .replace(/\(\(subquery\)\)/g, '(subquery)');
}

/** Top-level conjuncts: AND is split wherever it appears above the first non-AND operator (parenthesised or not). */
function conjuncts(e: unknown): Ast[] {
  if (!e || typeof e !== 'object') return [];
  const o = e as Ast;
  if (o.type === 'binary_expr' && String(o.operator).toUpperCase() === 'AND')
    return [...conjuncts(o.left), ...conjuncts(o.right)];
  return [o];
}

/** The set (sorted, de-duplicated) of canonical atomic predicate signatures of a WHERE/ON/HAVING expression. */
export function predicateSignatures(e: unknown): string[] {
  return uniqueSorted(conjuncts(e).map(predicateSignature));
}

const MIRROR: Record<string, string> = { '=': '=', '<>': '<>', '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

function canonicalOperator(op: unknown): string {
  const up = String(op ?? '')
    .toUpperCase()
    .replace(/\s+/g, ' ')
    .trim();
  if (up === '!=') return '<>';
  if (up === '==') return '=';
  return up;
}

/**
 * One atomic predicate in canonical form; anything that is not one of App. D's predicate shapes is its expression
 * signature.
 */
function predicateSignature(p: Ast): string {
  if (p.type === 'binary_expr') {
    const op = canonicalOperator(p.operator);
    if (op === 'OR') return `(${disjuncts(p).map(predicateSignature).join(' OR ')})`;
    // an AND nested under OR or NOT: its own conjuncts, order-free
    if (op === 'AND') return `(${uniqueSorted(conjuncts(p).map(predicateSignature)).join(' AND ')})`;
    if (op === 'IS' || op === 'IS NOT') {
      if (p.right?.type === 'null') return `${exprSignature(p.left)} ${op} NULL`;
      return `${exprSignature(p.left)} ${op} ${exprSignature(p.right)}`;
    }
    if (op === 'BETWEEN' || op === 'NOT BETWEEN') {
      const bounds = (p.right?.value as unknown[] | undefined) ?? [];
      return `${exprSignature(p.left)} ${op} ${bounds.map(exprSignature).join(' AND ')}`;
    }
    if (op === 'IN' || op === 'NOT IN') return `${exprSignature(p.left)} ${op} ${inList(p.right)}`;
    if (op === 'LIKE' || op === 'NOT LIKE' || op === 'GLOB' || op === 'NOT GLOB') {
      return `${exprSignature(p.left)} ${op} ${exprSignature(p.right)}`;
    }
    if (op in MIRROR) {
      let left = p.left as Ast;
      let right = p.right as Ast;
      let o = op;
      if (isLiteral(left) && !isLiteral(right)) {
        [left, right] = [right, left];
        o = MIRROR[op];
      }
      let l = exprSignature(left);
      let r = exprSignature(right);
      if (o === '=' && left?.type === 'column_ref' && right?.type === 'column_ref' && r < l) [l, r] = [r, l];
      return `${l} ${o} ${r}`;
    }
  }
  if (p.type === 'unary_expr' && String(p.operator).toUpperCase() === 'NOT')
    return `NOT ${wrap(predicateSignature(p.expr as Ast))}`;
  if (p.type === 'function' && functionName(p) === 'not') {
    const args = (p.args?.value as Ast[] | undefined) ?? [];
    if (args.length === 1) return `NOT ${wrap(predicateSignature(args[0]))}`;
  }
  return exprSignature(p);
}

function wrap(s: string): string {
  return s.startsWith('(') && s.endsWith(')') ? s : `(${s})`;
}

function disjuncts(e: Ast): Ast[] {
  if (e?.type === 'binary_expr' && String(e.operator).toUpperCase() === 'OR')
    return [...disjuncts(e.left as Ast), ...disjuncts(e.right as Ast)];
  return [e];
}

function inList(right: unknown): string {
  const r = right as Ast | null;
  if (r?.type === 'expr_list' && Array.isArray(r.value)) {
    const items = r.value as Ast[];
    if (items.length > 0 && items.every(isLiteral)) return '(?)';
    const inner = items.map(exprSignature).join(', ');
    return inner === '(subquery)' ? inner : `(${inner})`;
  }
  const s = exprSignature(r);
  return s.startsWith('(') ? s : `(${s})`;
}

export function functionName(f: Ast): string {
  const n = f.name;
  if (typeof n === 'string') return n.toLowerCase();
  const parts = (n?.name as Array<{ value?: unknown }> | undefined) ?? [];
  return parts
    .map((x) => String(x?.value ?? ''))
    .join('.')
    .toLowerCase();
}

export function uniqueSorted(xs: Iterable<string>): string[] {
  return [...new Set(xs)].sort();
}
