// MTSQL-R1's long-term memory M_{t-1} (§3.1): for every earlier turn of the dialogue its question u_i, its SQL y_i and
// the tool-parsed constraints/entities m_i. `memory_retrieve` returns it as App. D's traces print it:
//
//   == Turn 0 ==
//   Question: Question: <u_0>
//   Ground-Truth SQL: <y_0>
//   Parsed Elements for each term: <Spider parse of y_0, select reduced to column ids>
//   SQL Results (truncated to 50 characters): <str(rows of y_0)>
//   == Turn 0 ==
//
// Built from Task.history (earlier questions with their SQL, oldest first); the results come from the optional
// `result` of each history entry (see historyResults.ts), since a protocol runs no SQL itself.
import type { SchemaInfo } from '../../../db/schema/types';
import { buildSpiderSchema, parseSpiderSql, type SpiderSchema } from '../../../sql/spider';
import { parsedElements } from './pyRepr';
import type { Task } from '../../types';

type HistoryEntry = NonNullable<Task['history']>[number];

/** The traces print every question as "Question: …" (the datasets' utterances carried that prefix). */
export function asQuestion(q: string): string {
  const t = String(q ?? '').trim();
  return /^question:/i.test(t) ? t : `Question: ${t}`;
}

/** Spider's schema of the task's database, from the introspected schema (tables only, as Spider's get_schema reads). */
export function spiderSchemaOf(schema: SchemaInfo): SpiderSchema {
  return buildSpiderSchema(
    schema.tables.filter((t) => t.kind === 'table').map((t) => [t.name, t.columns.map((c) => c.name)]),
  );
}

/** The parsed elements of one SQL, or a sentence saying why Spider's parser could not read it. */
export function parsedElementsOf(spider: SpiderSchema, sql: string): string {
  try {
    return parsedElements(parseSpiderSql(spider, sql));
  } catch (err) {
    return `(not parsed: the Spider parser rejects this SQL: ${(err as Error).message})`;
  }
}

/** When a history entry has no `result`: say so rather than leave a blank the model might read as "no rows". */
const NO_HISTORY_RESULT = '(not available: this SQL was not run)';

/**
 * The memory string. Turns are numbered from 0 as in the traces; an empty history gives '' (the first question of a
 * dialogue has nothing to be coherent with).
 */
export function memoryString(history: readonly HistoryEntry[], spider: SpiderSchema): string {
  return history
    .map((h, i) =>
      [
        `== Turn ${i} ==`,
        `Question: ${asQuestion(h.question)}`,
        `Ground-Truth SQL: ${String(h.sql ?? '').trim()}`,
        `Parsed Elements for each term: ${parsedElementsOf(spider, String(h.sql ?? ''))}`,
        `SQL Results (truncated to 50 characters): ${typeof h.result === 'string' ? h.result : NO_HISTORY_RESULT}`,
        `== Turn ${i} ==`,
      ].join('\n'),
    )
    .join('\n\n');
}
