// The string rewrites the official Spider scripts apply to queries before running them. They change what runs,
// so a faithful evaluator must apply the same ones, in the same order.

/** evaluation.py: `p_str.replace(" value ", " 1 ")` — the placeholder some models emit for literal values. */
export function plugValuePlaceholder(pred: string): string {
  return pred.split(' value ').join(' 1 ');
}

/** exec_eval.py `postprocess`: joins comparison operators a tokenizer split apart ("> =" → ">="). */
export function joinSplitOperators(sql: string): string {
  if (!sql.includes(' =')) return sql; // nothing to join (the common case): no copies
  return sql.split('> =').join('>=').split('< =').join('<=').split('! =').join('!=');
}

/** exec_eval.py `replace_cur_year`: MySQL's YEAR(CURDATE()) becomes 2020 (SQLite has no CURDATE). */
export function replaceCurrentYear(sql: string): string {
  return sql.replace(/YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*/gi, '2020');
}

interface Token {
  text: string;
  word: boolean;
}

/** Splits SQL into words, quoted strings/identifiers, comments and single other characters. */
function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    let j = i + 1;
    if (c === "'" || c === '"' || c === '`') {
      while (j < sql.length) {
        if (sql[j] === c) {
          if (sql[j + 1] === c) {
            j += 2;
            continue;
          }
          j++;
          break;
        }
        j++;
      }
      out.push({ text: sql.slice(i, j), word: false });
    } else if (c === '[') {
      const end = sql.indexOf(']', i + 1);
      j = end < 0 ? sql.length : end + 1;
      out.push({ text: sql.slice(i, j), word: false });
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      j = end < 0 ? sql.length : end;
      out.push({ text: sql.slice(i, j), word: false });
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      j = end < 0 ? sql.length : end + 2;
      out.push({ text: sql.slice(i, j), word: false });
    } else if (/[\p{L}\p{N}_]/u.test(c)) {
      while (j < sql.length && /[\p{L}\p{N}_$]/u.test(sql[j])) j++;
      out.push({ text: sql.slice(i, j), word: true });
    } else {
      out.push({ text: c, word: false });
    }
    i = j;
  }
  return out;
}

/**
 * parse.py `remove_distinct`: `sqlparse.parse(s)[0]` keeps only the FIRST statement (through its `;`), then every
 * token spelled DISTINCT (any case) is dropped, spacing kept as is. Keeping only the first statement is a real
 * effect: "SELECT 1; SELECT 2" runs as "SELECT 1;" in Spider mode.
 */
export function removeDistinct(sql: string): string {
  // Without a `;` nothing is cut, and without the letters of DISTINCT no token is dropped: the text comes back as is.
  if (!sql.includes(';') && !sql.toLowerCase().includes('distinct')) return sql;
  let out = '';
  let ended = false;
  for (const t of tokenize(sql)) {
    if (ended) {
      // sqlparse folds whitespace after the `;` into the first statement; anything else starts the next one.
      if (/^\s+$/.test(t.text)) {
        out += t.text;
        continue;
      }
      break;
    }
    if (t.word && t.text.toLowerCase() === 'distinct') continue;
    out += t.text;
    if (t.text === ';') ended = true;
  }
  return out;
}

/** exec_eval.py: rows are compared in order only when the (rewritten) gold query says ORDER BY anywhere. */
export function goldOrderMatters(gold: string): boolean {
  return gold.toLowerCase().includes('order by');
}
