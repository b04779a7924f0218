// A canonical text form of a query, for string-equality exact match (MTSQL-R1's EM) and for n-gram rewards.
// Rules: comments dropped; trailing semicolons dropped; keywords upper-cased; bare identifiers and function names
// lower-cased (SQLite treats them case-insensitively); string literals and quoted identifiers kept exactly;
// one space between tokens, except that qualified names stay glued (t1.name).
import { tokenize, type Token } from './tokens';
import { isKeyword } from './keywords';

/** Tokens in canonical spelling, with `a.b` chains merged into one token and trailing semicolons removed. */
export function normalizedTokens(sql: string): string[] {
  const tokens = tokenize(sql);
  while (tokens.length > 0 && tokens[tokens.length - 1].text === ';') tokens.pop();
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const text = spell(t);
    const prev = tokens[i - 1];
    // Glue around '.', but only between name parts (not in "1 . 5" or after a closing paren).
    if (t.text === '.' && prev && isNamePart(prev) && tokens[i + 1] && isNamePart(tokens[i + 1]) && out.length > 0) {
      out[out.length - 1] += '.' + spell(tokens[i + 1]);
      i++;
      continue;
    }
    out.push(text);
  }
  return out;
}

/** The canonical string: normalizedTokens joined by single spaces. */
export function normalizeSql(sql: string): string {
  return normalizedTokens(sql).join(' ');
}

function isNamePart(t: Token): boolean {
  return t.kind === 'quoted' || t.kind === 'word' || t.text === '*';
}

function spell(t: Token): string {
  if (t.kind !== 'word') return t.text;
  return isKeyword(t.text) ? t.text.toUpperCase() : t.text.toLowerCase();
}
