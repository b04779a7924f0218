// BIRD: a JSON list of {question, evidence, SQL, db_id, difficulty}; difficulty is simple, moderate or challenging.
import { checkDatabases, databasePath } from './databases';
import { spiderHardnessSource } from './hardness';
import { optionalString, readJsonList, stringField } from './jsonItems';
import { countSkipped, type LoadOptions } from './spider';
import { DatasetError, type DatasetTask } from './types';

export const BIRD_LEVELS = ['simple', 'moderate', 'challenging'] as const;

export function loadBird(opts: LoadOptions): DatasetTask[] {
  const items = readJsonList(opts.file, 'BIRD');
  const raw = items.map((item, i) => {
    const where = `item ${i}`;
    const level = optionalString(item, 'difficulty', opts.file, where);
    if (level !== undefined && !BIRD_LEVELS.includes(level as never)) {
      throw new DatasetError(
        `${opts.file}: ${where} field "difficulty" is '${level}', expected ${BIRD_LEVELS.join(', ')}`,
      );
    }
    return {
      question: stringField(item, ['question'], opts.file, where),
      evidence: optionalString(item, 'evidence', opts.file, where),
      gold: stringField(item, ['SQL'], opts.file, where),
      dbId: stringField(item, ['db_id'], opts.file, where),
      level: level ?? null,
    };
  });
  const missing = checkDatabases(
    opts.dbDir,
    raw.map((r) => r.dbId),
    opts.skipMissing,
  );
  // Task.difficulty is Spider hardness (SQL-Trail's adaptive budget reads it); BIRD's own label is the report level.
  const hardnessOf = spiderHardnessSource(undefined);
  return raw.flatMap((r, index) => {
    if (missing.has(r.dbId)) return countSkipped(opts, r.dbId, 1);
    const dbPath = databasePath(opts.dbDir, r.dbId);
    const task: DatasetTask = {
      id: `${opts.idPrefix}:${index}`,
      index,
      question: r.question,
      dbPath,
      dbId: r.dbId,
      gold: r.gold,
      difficulty: hardnessOf(r.gold, r.dbId, dbPath),
      level: r.level,
    };
    if (r.evidence !== undefined && r.evidence.trim() !== '') task.evidence = r.evidence;
    return task;
  });
}
