// Python's sqlite3 (what text-to-SQL models and Spider's gold SQL were run with) accepts "double-quoted" string
// literals: SQLite's legacy rule treats a double-quoted name that matches no column as a string. better-sqlite3 is
// built with SQLITE_DQS=0 and offers no way to turn it back on, so the runner applies the same rule itself: when
// SQLite says such a name is no column, that name is re-quoted as a string literal and the statement prepared again.

const HINT = /^no such column: "((?:[^"]|"")*)" - should this be a string literal in single-quotes\?$/;

/** The double-quoted name SQLite could not resolve, from its error message, or null. */
export function unresolvedDoubleQuoted(message: string): string | null {
  const m = HINT.exec(message);
  return m ? m[1] : null;
}

/** Rewrites every double-quoted `"name"` token equal to `name` (outside strings and comments) as a string literal. */
export function requoteAsString(sql: string, name: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (ch === "'" || ch === '`' || ch === '[') {
      const close = ch === '[' ? ']' : ch;
      let j = i + 1;
      while (j < sql.length && !(sql[j] === close && sql[j + 1] !== close)) j += sql[j] === close ? 2 : 1;
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      const end = nl < 0 ? sql.length : nl;
      out += sql.slice(i, end);
      i = end;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      const end = close < 0 ? sql.length : close + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === '"' && sql[j + 1] !== '"')) j += sql[j] === '"' ? 2 : 1;
      const raw = sql.slice(i + 1, j);
      out += raw === name ? `'${raw.replace(/""/g, '"').replace(/'/g, "''")}'` : sql.slice(i, j + 1);
      i = j + 1;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}
