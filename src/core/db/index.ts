// The sandboxed SQLite environment: open read-only, run one read-only statement under time and size caps, render it.
export type { Cell, ErrorClass, ExecRequest, ExecResult, StorageSet } from './types';
export { createSqlPool } from './pool';
export type { SqlPool, SqlPoolOptions, BatchOptions } from './pool';
export { assertSqliteFile, openReadOnly, DatabaseOpenError, classifyOpenError } from './open';
export type { OpenErrorKind } from './open';
export { renderObservation, OBSERVATION_FORMATS, DEFAULT_OBSERVATION_CHARS } from './observation';
export type { ObservationFormat, ObservationOptions } from './observation';
export * from './limits';
