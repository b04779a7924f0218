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
  checkDatabases(
    opts.dbDir,
    raw.map((r) => r.dbId),
  );
  const hardnessOf = spiderHardnessSource(findTablesJson(opts.file, opts.dbDir));
  return raw.map((r, index) => {
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
