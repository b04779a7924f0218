// A small SQLite tokenizer: enough to normalise, split on set operators, and extract schema items when parsing fails.
// It never throws: an unterminated string or quoted name runs to the end of the text.

type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'op' | 'punct';

export interface Token {
  kind: TokenKind;
  /** The token as written. */
  text: string;
  /** Offset of its first character in the input. */
  start: number;
}

const WORD = /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/y;
const NUMBER = /(?:0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)/y;
const OPS = ['<<', '>>', '<=', '>=', '<>', '!=', '==', '||', '->>', '->'];

export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (ch === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl + 1;
      continue;
    }
    if (ch === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`' || ch === '[') {
      const close = ch === '[' ? ']' : ch;
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === close) {
          if (close !== ']' && sql[j + 1] === close) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      out.push({ kind: ch === "'" ? 'string' : 'quoted', text: sql.slice(i, Math.min(j + 1, sql.length)), start: i });
      i = j + 1;
      continue;
    }
    NUMBER.lastIndex = i;
    const num = /[0-9.]/.test(ch) ? NUMBER.exec(sql) : null;
    if (num && num[0] !== '.') {
      out.push({ kind: 'number', text: num[0], start: i });
      i += num[0].length;
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(sql);
    if (word) {
      out.push({ kind: 'word', text: word[0], start: i });
      i += word[0].length;
      continue;
    }
    const op = OPS.find((o) => sql.startsWith(o, i));
    if (op) {
      out.push({ kind: 'op', text: op, start: i });
      i += op.length;
      continue;
    }
    out.push({ kind: /[(),.;]/.test(ch) ? 'punct' : 'op', text: ch, start: i });
    i++;
  }
  return out;
}

/** The name a quoted identifier stands for ("a""b" → a"b, [x] → x, `y` → y). */
export function unquoteIdent(text: string): string {
  const open = text[0];
  if (open === '[') return text.slice(1, text.endsWith(']') ? -1 : undefined);
  if (open === '"' || open === '`') {
    const body = text.slice(1, text.length > 1 && text.endsWith(open) ? -1 : undefined);
    return body.split(open + open).join(open);
  }
  return text;
}
