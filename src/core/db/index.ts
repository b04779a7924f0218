// The sandboxed SQLite environment: open read-only, run one read-only statement under time and size caps, render it.
export type { ExecRequest, ExecResult, StorageSet } from './types';
export { createSqlPool } from './pool';
export type { SqlPool } from './pool';
export { assertSqliteFile, openReadOnly, DatabaseOpenError } from './open';
export type { OpenErrorKind } from './open';
export { renderObservation } from './observation';
export * from './limits';
