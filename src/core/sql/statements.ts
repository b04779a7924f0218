// The statements of a SQL document as offsets (split on semicolons outside strings, quoted names and comments), the
// one under the cursor, and where in a statement SQLite's error message points ("near \"FORM\": syntax error",
// "no such column: x"), so an editor can run one statement and mark its error at the right place.
import { tokenize, unquoteIdent, type Token } from './tokens';

interface StatementSpan {
  /** Offset of the statement's first token in the document. */
  start: number;
  /** Offset just past its last token (the semicolon, if any, is not part of it). */
  end: number;
  text: string;
}

/** Every statement of `doc` with at least one token, in order. */
export function splitStatements(doc: string): StatementSpan[] {
  const out: StatementSpan[] = [];
  let current: Token[] = [];
  const flush = () => {
    if (current.length === 0) return;
    const start = current[0].start;
    const lastTok = current[current.length - 1];
    const end = lastTok.start + lastTok.text.length;
    out.push({ start, end, text: doc.slice(start, end) });
    current = [];
  };
  for (const t of tokenize(doc)) {
    if (t.kind === 'punct' && t.text === ';') flush();
    else current.push(t);
  }
  flush();
  return out;
}

/**
 * The statement the cursor is in (or touches, or that ends on the cursor's line before it), else the nearest one
 * before the cursor, else the first after it. Null when the document has none.
 */
export function statementAt(doc: string, offset: number): StatementSpan | null {
  const all = splitStatements(doc);
  if (all.length === 0) return null;
  const inside = all.find((s) => offset >= s.start && offset <= s.end + 1);
  if (inside) return inside;
  const before = all.filter((s) => s.end <= offset);
  return before.length ? before[before.length - 1] : all[0];
}

interface ErrorSpot {
  /** Offset in the statement. */
  start: number;
  length: number;
}

/**
 * Where SQLite's message points in `statement`: the token after `near`, or the named column, table or function. The
 * whole statement when the message names nothing that can be found.
 */
export function errorSpot(statement: string, message: string): ErrorSpot {
  const whole = { start: 0, length: statement.length };
  const tokens = tokenize(statement);
  const near = /near "((?:[^"]|"")*)": syntax error/.exec(message);
  if (near) {
    const word = near[1].replace(/""/g, '"');
    const t = tokens.find((k) => k.text === word) ?? tokens.find((k) => k.text.toLowerCase() === word.toLowerCase());
    return t ? { start: t.start, length: t.text.length } : whole;
  }
  if (/incomplete input/.test(message) && tokens.length) {
    const lastTok = tokens[tokens.length - 1];
    return { start: lastTok.start, length: lastTok.text.length };
  }
  const named =
    /no such (?:column|table|function): ([^\s]+)/.exec(message) ?? /ambiguous column name: ([^\s]+)/.exec(message);
  if (!named) return whole;
  const parts = named[1].split('.');
  const name = parts[parts.length - 1].toLowerCase();
  const qualifier = parts.length > 1 ? parts[parts.length - 2].toLowerCase() : null;
  const ident = (t: Token) => (t.kind === 'quoted' ? unquoteIdent(t.text) : t.text).toLowerCase();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if ((t.kind !== 'word' && t.kind !== 'quoted') || ident(t) !== name) continue;
    if (qualifier !== null) {
      const dot = tokens[i - 1];
      const q = tokens[i - 2];
      if (dot?.text === '.' && q && ident(q) === qualifier)
        return { start: q.start, length: t.start + t.text.length - q.start };
      continue;
    }
    return { start: t.start, length: t.text.length };
  }
  return whole;
}
