// A conversation about one database: the questions asked so far and the SQL that answered them. The whole
// conversation runs with the protocol its first question was asked with; every follow-up carries the earlier answered
// questions as Task.history (with each SQL's result), which each protocol shows in its own format — MTSQL-R1 as its
// memory, the others as an "Earlier in this conversation" block — so "and only the ones from 2010?" is read against
// what came before.
import type { ExecResult } from '../db/types';
import type { ProtocolName, Task } from './types';
import { historyResultText, MEMORY_RESULT_ROWS } from './protocols/mtsqlr1/historyResults';

/** One question of the conversation and how it ended. */
export interface Exchange {
  question: string;
  /** The final SQL, or null when the episode gave none (cancelled, out of turns, failed). */
  sql: string | null;
  /** What running `sql` returned, as MTSQL-R1's memory shows it (Python `str(rows)` or the error), once known. */
  result?: string;
  /** The protocol that answered it. */
  protocol?: ProtocolName;
}

/** Earlier exchanges that can be remembered: only answered ones — a question without SQL has nothing to recall. */
export function answered(exchanges: readonly Exchange[]): Exchange[] {
  return exchanges.filter((e) => typeof e.sql === 'string' && e.sql.trim() !== '');
}

/** The protocol for the next question: the conversation's (its first question's), or `chosen` to start one. */
export function protocolForNext(exchanges: readonly Exchange[], chosen: ProtocolName): ProtocolName {
  return exchanges.find((e) => e.protocol !== undefined)?.protocol ?? chosen;
}

/**
 * The Task for the next question: the answered exchanges become its history, oldest first, with the results
 * already known. Entries without a result are left for `withHistoryResults` to fill by running their SQL.
 */
export function nextTask(question: string, dbPath: string, exchanges: readonly Exchange[]): Task {
  const text = question.trim();
  if (text === '') throw new Error('the question is empty');
  const history = answered(exchanges).map((e) =>
    e.result === undefined
      ? { question: e.question, sql: e.sql as string }
      : { question: e.question, sql: e.sql as string, result: e.result },
  );
  return history.length === 0 ? { question: text, dbPath } : { question: text, dbPath, history };
}

/** The memory text for an answer's result, from the execution the user was shown. */
export function exchangeResult(result: ExecResult, maxRows = MEMORY_RESULT_ROWS): string {
  return historyResultText(result, maxRows);
}
