// Comparing two trajectories: turns paired by index, and a token-level diff of two SQL statements so a compare view
// can mark exactly where two final queries differ. Pure; shared by the host and webview apps.

type DiffOp = 'same' | 'removed' | 'added';
/** `a`/`b`: the part as each statement spells it (`removed` parts have b = '', `added` parts a = ''). */
export interface DiffPart {
  op: DiffOp;
  a: string;
  b: string;
}

/**
 * Words, quoted strings, numbers and single punctuation marks; whitespace is kept attached so text rebuilds exactly.
 */
export function sqlTokens(sql: string): string[] {
  const out: string[] = [];
  const re =
    // \s*( quoted string or name | bracketed name | word | number | two-character operator | any other character )\s*
    new RegExp(
      '\\s*(' +
        [/'(?:[^']|'')*'?/, /"(?:[^"]|"")*"?/, /`[^`]*`?/, /\[[^\]]*\]?/, /[A-Za-z_][A-Za-z0-9_.]*/, /\d+(?:\.\d+)?/]
          .concat(/<=|>=|<>|!=|\|\||\S/)
          .map((r) => r.source)
          .join('|') +
        ')\\s*',
      'gy',
    );
  let m: RegExpExecArray | null;
  while ((m = re.exec(sql)) !== null && m[0] !== '') out.push(m[0]);
  return out;
}

/** Tokens compare without their surrounding whitespace and, for keywords and names, without case. */
const norm = (t: string) => {
  const s = t.trim();
  return /^['"`[]/.test(s) ? s : s.toLowerCase();
};

/** Above this many token pairs the quadratic LCS is not worth it: the statements are shown as wholly replaced. */
const MAX_CELLS = 4_000_000;

/** Longest-common-subsequence diff of two SQL statements over tokens; `removed` parts are a's, `added` are b's. */
export function diffSql(a: string, b: string): DiffPart[] {
  const x = sqlTokens(a),
    y = sqlTokens(b);
  const n = x.length,
    m = y.length;
  if (n * m > MAX_CELLS)
    return [...(a ? [{ op: 'removed' as const, a, b: '' }] : []), ...(b ? [{ op: 'added' as const, a: '', b }] : [])];
  const xn = x.map(norm),
    yn = y.map(norm);
  // lcs[i][j] = LCS length of x[i..] and y[j..], flattened.
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] =
        xn[i] === yn[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const parts: DiffPart[] = [];
  const push = (op: DiffOp, ta: string, tb: string) => {
    const last = parts[parts.length - 1];
    if (last && last.op === op) {
      last.a += ta;
      last.b += tb;
    } else parts.push({ op, a: ta, b: tb });
  };
  let i = 0,
    j = 0;
  while (i < n && j < m) {
    if (xn[i] === yn[j]) {
      push('same', x[i], y[j]);
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) push('removed', x[i++], '');
    else push('added', '', y[j++]);
  }
  while (i < n) push('removed', x[i++], '');
  while (j < m) push('added', '', y[j++]);
  return parts;
}

/** True when the two statements differ only in whitespace and keyword/name case. */
export function sameSql(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  return diffSql(a, b).every((p) => p.op === 'same');
}

/** Turn indices 0…max(a, b)−1 with each side's turn (or null where one trajectory is shorter). */
export function alignTurns<T>(a: readonly T[], b: readonly T[]): Array<{ index: number; a: T | null; b: T | null }> {
  const n = Math.max(a.length, b.length);
  return Array.from({ length: n }, (_, index) => ({ index, a: a[index] ?? null, b: b[index] ?? null }));
}
