// MTSQL-R1 (seed 003): long-horizon conversational text-to-SQL with two tools — exec_sql (database) and
// memory_retrieve (the dialogue's long-term memory) — and explicit verdicts, labelled with the paper's MDP actions.
import type { Protocol } from '../../protocol';
import type { ProtocolConfig } from '../../types';
import { Mtsqlr1Session } from './session';
import { withHistoryResults } from './historyResults';

/**
 * maxTurns 4: App. B sets `multi_turn.max_turns: 4`, which verl's SGLang rollout counts as assistant generations
 * (each generation, tool call or answer, is one turn; App. D.1's episode uses all four).
 */
const MTSQLR1_DEFAULTS: ProtocolConfig = {
  maxTurns: 4,
  schemaStyle: 'ddl',
  sampleRows: 1,
  resultChars: 200,
  stopAtToolCall: true,
  toolRole: 'user',
  fallbackToLastSql: false,
};

export const mtsqlr1Protocol: Protocol = {
  name: 'mtsqlr1',
  defaults: MTSQLR1_DEFAULTS,
  // The memory quotes each earlier turn's SQL results. The editor passes the ones it showed; datasets (SParC/CoSQL
  // gold history) arrive without them, so they are run in the sandbox, once per episode.
  async prepareTask(task, ctx) {
    if (!task.history?.length) return task;
    try {
      return await withHistoryResults(task, ctx.pool, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
    } catch {
      return task; // the memory then says the result is not available, which is what the model would see anyway
    }
  },
  create: (ctx) => new Mtsqlr1Session(ctx),
};

export { Mtsqlr1Session, NOT_EXECUTED } from './session';
export { parseTurn, INITIAL_STATE, type TurnState, type Mtsqlr1Action } from './parse';
export { memoryString, spiderSchemaOf, parsedElementsOf } from './memory';
export { withHistoryResults, historyResultText } from './historyResults';
export { pyRows, pyStr } from './pyRepr';
export * from './prompts';
