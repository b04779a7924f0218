// SParC and CoSQL (SQL-grounded dialogue state tracking files): a JSON list of interactions
// {database_id, interaction: [{utterance, query}], final}. Every turn is one task; its history holds the earlier
// turns' questions with their GOLD SQL, as the official evaluation feeds them.
import { checkDatabases, databasePath } from './databases';
import { findTablesJson, spiderHardnessSource } from './hardness';
import { listField, readJsonList, stringField, type JsonObject } from './jsonItems';
import { countSkipped, type LoadOptions } from './spider';
import { DatasetError, type DatasetTask } from './types';

export function loadConversational(opts: LoadOptions, what: 'SParC' | 'CoSQL'): DatasetTask[] {
  const items = readJsonList(opts.file, what);
  const sessions = items.map((item, i) => {
    const where = `interaction ${i}`;
    const dbId = stringField(item, ['database_id'], opts.file, where);
    const turns = listField(item, 'interaction', opts.file, where).map((t, j) => {
      const at = `${where} turn ${j}`;
      if (t === null || typeof t !== 'object' || Array.isArray(t))
        throw new DatasetError(`${opts.file}: ${at} is not an object`);
      return {
        question: stringField(t as JsonObject, ['utterance'], opts.file, at),
        sql: stringField(t as JsonObject, ['query'], opts.file, at),
      };
    });
    return { dbId, turns };
  });
  const missing = checkDatabases(
    opts.dbDir,
    sessions.map((s) => s.dbId),
    opts.skipMissing,
  );
  const hardnessOf = spiderHardnessSource(findTablesJson(opts.file, opts.dbDir));
  const tasks: DatasetTask[] = [];
  sessions.forEach((s, i) => {
    if (missing.has(s.dbId)) return void countSkipped(opts, s.dbId, s.turns.length);
    const dbPath = databasePath(opts.dbDir, s.dbId);
    s.turns.forEach((turn, j) => {
      const difficulty = hardnessOf(turn.sql, s.dbId, dbPath);
      tasks.push({
        id: `${opts.idPrefix}:${i}:${j}`,
        index: tasks.length,
        question: turn.question,
        dbPath,
        dbId: s.dbId,
        gold: turn.sql,
        history: s.turns.slice(0, j).map((h) => ({ question: h.question, sql: h.sql })),
        difficulty,
        level: difficulty ?? null,
        interaction: i,
      });
    });
  });
  return tasks;
}
