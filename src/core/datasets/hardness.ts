// Spider hardness of each gold query. The official evaluation.py parses the gold against the database's own schema;
// when a tables.json is at hand (beside the data file or in the database directory) its schema is used instead, as
// the Spider data tools do, which also avoids opening every database while loading.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spiderHardness, type Hardness } from '../sql/hardness';
import { loadSpiderSchema, schemaFromTablesEntry, type SpiderSchema, type TablesJsonEntry } from '../sql/spider/schema';
import { DatasetError } from './types';

type HardnessOf = (gold: string, dbId: string, dbPath: string) => Hardness | undefined;

/** The tables.json to use for a data file, or undefined when there is none. */
export function findTablesJson(dataFile: string, dbDir: string): string | undefined {
  return [join(dirname(dataFile), 'tables.json'), join(dbDir, 'tables.json')].find((p) => existsSync(p));
}

function readTables(path: string): Map<string, SpiderSchema> {
  let entries: unknown;
  try {
    entries = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new DatasetError(`cannot read tables file ${path}: ${(err as Error).message}`);
  }
  if (!Array.isArray(entries)) throw new DatasetError(`${path}: expected a JSON list of schemas`);
  const out = new Map<string, SpiderSchema>();
  entries.forEach((e: Partial<TablesJsonEntry>, i) => {
    if (
      typeof e?.db_id !== 'string' ||
      !Array.isArray(e.table_names_original) ||
      !Array.isArray(e.column_names_original)
    ) {
      throw new DatasetError(`${path}: schema ${i} lacks db_id, table_names_original or column_names_original`);
    }
    out.set(e.db_id, schemaFromTablesEntry(e as TablesJsonEntry));
  });
  return out;
}

/**
 * A hardness function for one dataset: tables.json schemas when `tablesPath` is given (falling back to the database
 * for a db_id it lacks), otherwise each database's own schema.
 */
export function spiderHardnessSource(tablesPath: string | undefined): HardnessOf {
  const tables = tablesPath ? readTables(tablesPath) : new Map<string, SpiderSchema>();
  return (gold, dbId, dbPath) => {
    let schema = tables.get(dbId);
    if (!schema) {
      try {
        schema = loadSpiderSchema(dbPath);
      } catch {
        return undefined;
      }
    }
    return spiderHardness(gold, schema).hardness ?? undefined;
  };
}
