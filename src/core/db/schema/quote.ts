// Identifier quoting: names with spaces, quotes or keywords must still read back as the same identifier.

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Words SQLite reserves as keywords that commonly turn up as column names; quoting them keeps rendered DDL valid.
const KEYWORDS = new Set(
  `abort action add after all alter always analyze and as asc attach autoincrement before begin
between by cascade case cast check collate column commit conflict constraint create cross current current_date
current_time current_timestamp database default deferrable deferred delete desc detach distinct do drop each else end
escape except exclude exclusive exists explain fail filter first following for foreign from full generated glob group
groups having if ignore immediate in index indexed initially inner insert instead intersect into is isnull join key last
left like limit match materialized natural no not nothing notnull null nulls of offset on or order others outer over
partition plan pragma preceding primary query raise range recursive references regexp reindex release rename replace
restrict returning right rollback row rows savepoint select set table temp temporary then ties to transaction trigger
unbounded union unique update using vacuum values view virtual when where window with without`.split(/\s+/),
);

/** Always-quoted form, for SQL we run ("a""b"). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Quoted only when needed, for SQL shown to people and models (plain names stay plain, as in the papers). */
export function quoteIdentIfNeeded(name: string): string {
  return PLAIN.test(name) && !KEYWORDS.has(name.toLowerCase()) ? name : quoteIdent(name);
}
