// Deterministic perturbations of Spider gold SQL: the wrong-or-maybe-wrong predictions the eval and env benchmarks
// feed to Quarry and to the reference tools.

/** Deterministic wrong-or-maybe-wrong variants of a gold query; the kind cycles with the index. */
export function perturb(sql: string, i: number, tablesOf: (sql: string) => string[]): string {
  const kinds: ((s: string) => string | undefined)[] = [
    (s) =>
      /\bORDER BY\b/i.test(s)
        ? /\bDESC\b/i.test(s)
          ? s.replace(/\bDESC\b/i, 'ASC')
          : /\bASC\b/i.test(s)
            ? s.replace(/\bASC\b/i, 'DESC')
            : s.replace(/(\bORDER BY\s+[^\s,)]+(?:\s*\([^)]*\))?)/i, '$1 DESC')
        : undefined,
    (s) => (/\bDISTINCT\b/i.test(s) ? s.replace(/\bDISTINCT\s+/i, '') : s.replace(/^SELECT\s+/i, 'SELECT DISTINCT ')),
    (s) =>
      /(['"])[^'"]*\1/.test(s)
        ? s.replace(/(['"])([^'"]*)\1/, '$1$2x$1')
        : /\b\d+\b/.test(s)
          ? s.replace(/\b(\d+)\b/, (_, n: string) => String(Number(n) + 1))
          : undefined,
    (s) =>
      /\bWHERE\b[^()]*?\s(AND|OR)\s/i.test(s)
        ? s.replace(/\s(AND|OR)\s.*?(?=\s(?:GROUP BY|ORDER BY|LIMIT|INTERSECT|UNION|EXCEPT)\b|\)|$)/i, '')
        : undefined,
    (s) => {
      const m = /^SELECT\s+(.+?)\s+FROM\b/i.exec(s);
      if (!m || m[1].includes('(') || !m[1].includes(',')) return undefined;
      const cols = m[1].split(',').map((c) => c.trim());
      return s.replace(m[1], [cols[1], cols[0], ...cols.slice(2)].join(' , '));
    },
    (s) => (/\bLIMIT\b/i.test(s) ? s.replace(/\bLIMIT\s+\d+/i, 'LIMIT 2') : s + ' LIMIT 1'),
    (s) => {
      const m = /\bFROM\s+([A-Za-z_][\w]*)/i.exec(s);
      const other = m && tablesOf(s).find((t) => t.toLowerCase() !== m[1].toLowerCase());
      return m && other ? s.replace(m[0], `FROM ${other}`) : undefined;
    },
    (s) => s,
  ];
  for (let k = 0; k < kinds.length; k++) {
    const out = kinds[(i + k) % kinds.length](sql);
    if (out !== undefined && out !== sql) return out;
  }
  return sql;
}
