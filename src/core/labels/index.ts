// Labels: the workspace label store (SQLite, WAL) and the SFT / RL-prompt exporters that read it.
export * from './types';
export {
  LabelStore,
  LabelStoreError,
  normalizeTag,
  LABEL_SCHEMA_VERSION,
  DEFAULT_BUSY_TIMEOUT_MS,
} from './store';
export type { LabelStoreOptions, LabelStoreErrorKind, TagInfo, LabelCounts } from './store';
export { recordSha } from './recordSha';
export { answerBlock, answerBlockStart, rewriteAnswerTurn } from './answerFormat';
export { toSftExample, asGeneratedExample, SFT_SCHEMA } from './sft';
export type { SftExample, SftMessage, SftOptions, SftOutcome } from './sft';
export { toRlPrompts, RL_SCHEMA } from './rl';
export type { RlPrompt, RlSkip } from './rl';
export { exportSft, exportRlPrompts, readLabeledRecords } from './exportJsonl';
export type { ExportSummary, LabeledRecords } from './exportJsonl';
export { checkCorrectedSql } from './checkSql';
export type { CorrectedSqlCheck, CheckOptions } from './checkSql';
export { orderQueue, isLabeled, QUEUE_FILTER_NAMES } from './queue';
export type { QueueFilter } from './queue';
