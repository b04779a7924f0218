// Decides whether a prepared statement may run. The engine is the authority (statement.readonly, statement.reader);
// the keyword checks only cover what better-sqlite3 gives no signal for (ATTACH, BEGIN, PRAGMA settings…).
import type Database from 'better-sqlite3';

/** PRAGMAs whose argument names a table or index: they only report. */
const TABLE_PRAGMAS = new Set([
  'table_info',
  'table_xinfo',
  'table_list',
  'index_list',
  'index_info',
  'index_xinfo',
  'foreign_key_list',
  'foreign_key_check',
  'integrity_check',
  'quick_check',
]);
/** PRAGMAs that report a value when given no argument (with one, or with `=`, most of them change it). */
const VALUE_PRAGMAS = new Set([
  'database_list',
  'collation_list',
  'function_list',
  'module_list',
  'pragma_list',
  'compile_options',
  'user_version',
  'schema_version',
  'application_id',
  'encoding',
  'page_count',
  'page_size',
  'freelist_count',
  'foreign_keys',
  'auto_vacuum',
  'data_version',
  'max_page_count',
  'query_only',
  'recursive_triggers',
  'table_list',
  'integrity_check',
  'quick_check',
  'foreign_key_check',
]);

/** Statements whose first keyword can produce a read-only result set. */
const READ_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'EXPLAIN', 'PRAGMA']);

/** Removes leading whitespace (any Unicode space) and SQL comments, which may hide the first keyword. */
export function stripLeadingNoise(sql: string): string {
  let s = sql;
  for (;;) {
    const t = s.replace(/^[\s\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff;]+/u, '');
    if (t.startsWith('--')) {
      const nl = t.indexOf('\n');
      s = nl < 0 ? '' : t.slice(nl + 1);
      continue;
    }
    if (t.startsWith('/*')) {
      const end = t.indexOf('*/', 2);
      s = end < 0 ? '' : t.slice(end + 2);
      continue;
    }
    return t;
  }
}

export function leadingKeyword(sql: string): string {
  return (/^[A-Za-z_]+/.exec(stripLeadingNoise(sql))?.[0] ?? '').toUpperCase();
}

/**
 * The statement an EXPLAIN wraps (`EXPLAIN x`, `EXPLAIN QUERY PLAN x`, comments anywhere between), or the statement
 * itself. SQLite compiles the wrapped statement, so whatever it applies while compiling (a PRAGMA setting) it applies
 * under EXPLAIN too.
 */
export function unwrapExplain(sql: string): string {
  let body = stripLeadingNoise(sql);
  while (leadingKeyword(body) === 'EXPLAIN') {
    body = stripLeadingNoise(body.slice('EXPLAIN'.length));
    if (leadingKeyword(body) === 'QUERY') {
      body = stripLeadingNoise(body.slice('QUERY'.length));
      if (leadingKeyword(body) === 'PLAN') body = stripLeadingNoise(body.slice('PLAN'.length));
    }
  }
  return body;
}

/** Keywords EXPLAIN may wrap: queries, and the PRAGMAs the PRAGMA check lets through. */
const EXPLAINABLE = new Set(['SELECT', 'WITH', 'VALUES', 'PRAGMA']);

/**
 * Checked before prepare: SQLite applies many PRAGMAs while compiling them (`PRAGMA query_only = 0` turns the guard
 * off at prepare time, `EXPLAIN PRAGMA case_sensitive_like = 1` changes LIKE for every later statement), so a PRAGMA
 * must be judged from its text before SQLite ever sees it — bare or under EXPLAIN.
 */
export function whyPragmaNotAllowed(sql: string): string | null {
  const outer = stripLeadingNoise(sql);
  const body = unwrapExplain(outer);
  if (body !== outer && !EXPLAINABLE.has(leadingKeyword(body))) {
    return (
      `statement rejected: EXPLAIN of ${leadingKeyword(body) || 'this statement'} ` + `is not allowed (only of queries)`
    );
  }
  if (leadingKeyword(body) !== 'PRAGMA') return null;
  // The whole statement must have one of the two harmless shapes; anything else (a comment between the name and
  // `=`, odd quoting…) is refused rather than parsed, since SQLite would apply it while compiling.
  const ident = String.raw`(?:"\w+"|\[\w+\]|\x60\w+\x60|\w+)`;
  const shape = new RegExp(
    String.raw`^PRAGMA\s+(?:${ident}\s*\.\s*)?(${ident})\s*(?:\(\s*(?:${ident}|'[^']*')\s*\))?\s*;?\s*$`,
    'i',
  );
  const m = shape.exec(body);
  const name = (m?.[1] ?? /^PRAGMA\s+(?:\S+\s*\.\s*)?["`[]?(\w*)/i.exec(body)?.[1] ?? '')
    .replace(/["`[\]]/g, '')
    .toLowerCase();
  const hasArg = !!m && /\(/.test(body);
  const allowed = !!m && (hasArg ? TABLE_PRAGMAS.has(name) : VALUE_PRAGMAS.has(name) || TABLE_PRAGMAS.has(name));
  return allowed
    ? null
    : `statement rejected: PRAGMA ${name} is not allowed in this form (only read-only PRAGMAs, without "=")`;
}

/** Returns why `sql` may not run, or null if it may. `stmt` is its prepared statement. */
export function whyNotReadOnly(sql: string, stmt: Database.Statement): string | null {
  if (!stmt.readonly) return 'statement rejected: it would write to the database (only read-only queries are allowed)';
  if (!stmt.reader)
    return (
      'statement rejected: only queries that return rows are allowed (no ATTACH, DETACH, BEGIN, SAVEPOINT, ' +
      'REINDEX or PRAGMA settings)'
    );
  const body = stripLeadingNoise(sql);
  const keyword = leadingKeyword(body);
  if (!READ_KEYWORDS.has(keyword)) return `statement rejected: ${keyword || 'this statement'} is not a read-only query`;
  if (/\bload_extension\s*\(/i.test(body)) return 'statement rejected: load_extension is not allowed';
  return whyPragmaNotAllowed(body);
}

/** better-sqlite3 refuses a string holding several statements with this message at prepare time. */
export function isMultiStatementError(err: unknown): boolean {
  return /more than one statement/i.test((err as Error)?.message ?? '');
}
