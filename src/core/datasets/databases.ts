// Where a dataset's databases are (`<dbDir>/<db_id>/<db_id>.sqlite`) and one clear error for all the missing ones.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatasetError } from './types';

export function databasePath(dbDir: string, dbId: string): string {
  return join(dbDir, dbId, `${dbId}.sqlite`);
}

/**
 * The db_ids with no database file. Throws when dbDir is not a directory, or when any is missing unless
 * `skipMissing` (then only when every one is: nothing would be left to run).
 */
export function checkDatabases(dbDir: string, dbIds: Iterable<string>, skipMissing = false): Set<string> {
  if (!existsSync(dbDir) || !statSync(dbDir).isDirectory())
    throw new DatasetError(`database directory ${dbDir} does not exist or is not a directory`);
  const all = [...new Set(dbIds)];
  const missing = all.filter((id) => !existsSync(databasePath(dbDir, id)));
  if (missing.length > 0 && (!skipMissing || missing.length === all.length)) {
    const shown = missing.slice(0, 10).join(', ') + (missing.length > 10 ? ` … (${missing.length} in all)` : '');
    throw new DatasetError(`no database for db_id ${shown} in ${dbDir} (expected ${databasePath(dbDir, missing[0])})`);
  }
  return new Set(missing);
}

/**
 * The line naming a database that was missing when the dataset was loaded with skipMissing, and the questions that
 * were skipped for it (`quarry bench`, `quarry data rl`).
 */
export function skippedDatabaseText(dbDir: string, s: { dbId: string; questions: number }): string {
  return (
    `no database for db_id ${s.dbId} in ${dbDir}: skipped its ${s.questions} ` +
    `question${s.questions === 1 ? '' : 's'} (--strict refuses instead)`
  );
}
