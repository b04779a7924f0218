// Spider and its variants (Spider-DK, Spider-Syn, Spider-Realistic): a JSON list of {question, query, db_id}.
import { checkDatabases, databasePath } from './databases';
import { findTablesJson, spiderHardnessSource } from './hardness';
import { readJsonList, stringField } from './jsonItems';
import type { DatasetTask } from './types';

export interface LoadOptions {
  /** Absolute path of the JSON file. */
  file: string;
  /** Absolute path of the database directory. */
  dbDir: string;
  /** Prefix of task ids, e.g. `spider:dev`. */
  idPrefix: string;
  /** Leave out the questions whose database is missing (ids keep their positions) instead of refusing. */
  skipMissing?: boolean;
  /** Filled with the questions left out per missing db_id (with skipMissing). */
  skipped?: Map<string, number>;
}

/** Notes `n` questions of `dbId` left out; returns no tasks. */
export function countSkipped(opts: LoadOptions, dbId: string, n: number): [] {
  opts.skipped?.set(dbId, (opts.skipped.get(dbId) ?? 0) + n);
  return [];
}

export function loadSpider(opts: LoadOptions): DatasetTask[] {
  const items = readJsonList(opts.file, 'Spider');
  const raw = items.map((item, i) => {
    const where = `item ${i}`;
    return {
      // Spider-Syn keeps the rewritten question in SpiderSynQuestion.
      question: stringField(item, ['question', 'SpiderSynQuestion'], opts.file, where),
      gold: stringField(item, ['query'], opts.file, where),
      dbId: stringField(item, ['db_id'], opts.file, where),
    };
  });
  const missing = checkDatabases(
    opts.dbDir,
    raw.map((r) => r.dbId),
    opts.skipMissing,
  );
  const hardnessOf = spiderHardnessSource(findTablesJson(opts.file, opts.dbDir));
  return raw.flatMap((r, index) => {
    if (missing.has(r.dbId)) return countSkipped(opts, r.dbId, 1);
    const dbPath = databasePath(opts.dbDir, r.dbId);
    const difficulty = hardnessOf(r.gold, r.dbId, dbPath);
    return {
      id: `${opts.idPrefix}:${index}`,
      index,
      question: r.question,
      dbPath,
      dbId: r.dbId,
      gold: r.gold,
      difficulty,
      level: difficulty ?? null,
    };
  });
}
