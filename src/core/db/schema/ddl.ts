// "Copy DDL": the CREATE statements SQLite keeps for a database (tables, views, indexes, triggers, in creation order)
// or for one table (with its own indexes and triggers), as a script that rebuilds the schema.

/** The catalog query whose rows formatDdl() takes: (type, name, tbl_name, sql). */
export const DDL_CATALOG_SQL =
  'SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ' +
  "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid";

export interface CatalogEntry {
  type: string;
  name: string;
  tableName: string;
  sql: string;
}

/** Rows of DDL_CATALOG_SQL as entries (cells as the sandbox returns them). */
export function catalogEntries(rows: readonly (readonly unknown[])[]): CatalogEntry[] {
  return rows
    .filter((r) => typeof r[3] === 'string')
    .map((r) => ({ type: String(r[0]), name: String(r[1]), tableName: String(r[2]), sql: String(r[3]) }));
}

/**
 * The script: each statement as SQLite stored it, ending in ';', separated by blank lines. With `table`, that table
 * (or view) and the indexes and triggers on it; throws when there is no such table.
 */
export function formatDdl(entries: readonly CatalogEntry[], table?: string): string {
  let chosen = entries;
  if (table !== undefined) {
    const own = entries.find((e) => (e.type === 'table' || e.type === 'view') && e.name === table);
    if (!own) throw new Error(`no table or view named ${JSON.stringify(table)}`);
    chosen = [
      own,
      ...entries.filter((e) => e !== own && e.tableName === table && (e.type === 'index' || e.type === 'trigger')),
    ];
  }
  return chosen.map((e) => `${e.sql.trim().replace(/;\s*$/, '')};`).join('\n\n') + (chosen.length > 0 ? '\n' : '');
}
