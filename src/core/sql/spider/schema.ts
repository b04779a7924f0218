// The official Schema: lowercased table -> lowercased columns, and idMap from "table.column" / "table" / "*" to ids.
import { openReadOnly } from '../../db/open';

export interface SpiderSchema {
  /** Table -> columns, in the database's order (Python dict order). */
  readonly tables: ReadonlyMap<string, readonly string[]>;
  readonly idMap: ReadonlyMap<string, string>;
}

export function buildSpiderSchema(tables: Iterable<[table: string, columns: readonly string[]]>): SpiderSchema {
  const byTable = new Map<string, readonly string[]>();
  for (const [t, cols] of tables)
    byTable.set(
      t.toLowerCase(),
      cols.map((c) => c.toLowerCase()),
    );
  const idMap = new Map<string, string>([['*', '__all__']]);
  for (const [t, cols] of byTable) for (const c of cols) idMap.set(`${t}.${c}`, `__${t}.${c}__`);
  for (const t of byTable.keys()) idMap.set(t, `__${t}__`);
  return { tables: byTable, idMap };
}

/** get_schema(db): every table in sqlite_master (sqlite_sequence included, as the official script sees it). */
function readSpiderSchema(dbPath: string): SpiderSchema {
  const db = openReadOnly(dbPath);
  try {
    const names = (
      db.prepare("SELECT name FROM sqlite_master WHERE type='table'").all() as Array<{ name: string }>
    ).map((r) => r.name.toLowerCase());
    const tables: Array<[string, string[]]> = names.map((t) => [t, tableColumns(db, t)]);
    return buildSpiderSchema(tables);
  } finally {
    db.close();
  }
}

type Db = ReturnType<typeof openReadOnly>;

function tableColumns(db: Db, table: string): string[] {
  let rows: Array<{ name: string }>;
  try {
    // The official script interpolates the name unquoted; same result whenever that is valid SQL.
    rows = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
  } catch {
    // Where Python would crash (names with spaces, keywords) read the table anyway rather than fail the run.
    rows = db.prepare(`PRAGMA table_info("${table.replace(/"/g, '""')}")`).all() as Array<{ name: string }>;
  }
  return rows.map((r) => r.name.toLowerCase());
}

const schemaCache = new Map<string, SpiderSchema>();

/** readSpiderSchema memoized per database path (a Spider split evaluates thousands of items over ~200 files). */
export function loadSpiderSchema(dbPath: string): SpiderSchema {
  let s = schemaCache.get(dbPath);
  if (!s) {
    s = readSpiderSchema(dbPath);
    schemaCache.set(dbPath, s);
  }
  return s;
}

/** One entry of Spider's tables.json (the fields read here and by the foreign-key map). */
export interface TablesJsonEntry {
  db_id: string;
  table_names_original: string[];
  column_names_original: Array<[tableIndex: number, column: string]>;
  foreign_keys: Array<[number, number]>;
}

/** A schema from tables.json instead of the SQLite file (same ids; no sqlite_sequence). */
export function schemaFromTablesEntry(entry: TablesJsonEntry): SpiderSchema {
  const tables: Array<[string, string[]]> = entry.table_names_original.map((t) => [t, []]);
  for (const [ti, c] of entry.column_names_original) if (ti >= 0) tables[ti]![1].push(c);
  return buildSpiderSchema(tables);
}
