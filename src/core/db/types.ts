// The contract between callers (CLI, evaluator, agent, rewards) and the sandboxed SQL runner.

/** A cell as SQLite returns it. INTEGERs beyond 2^53 arrive as bigint so no value is silently rounded. */
export type Cell = null | number | bigint | string | Uint8Array;

/**
 * Why a statement did not produce a result:
 * - `sql`: SQLite rejected or failed it (syntax, no such table/column, runtime error) — the message is SQLite's own.
 * - `rejected`: it would write or change the connection (not read-only, ATTACH, PRAGMA writes, several statements…).
 * - `timeout`: it ran past its time budget and its worker was killed.
 * - `resource`: it exceeded a memory or size cap (memory bombs); the worker was replaced if needed.
 */
export type ErrorClass = 'sql' | 'rejected' | 'timeout' | 'resource';

export interface ExecRequest {
  /** Absolute path of the SQLite file. */
  db: string;
  sql: string;
  /** Wall-clock budget for this statement, ms. Default 5000. */
  timeoutMs?: number;
  /** Rows to keep; the runner keeps counting past it (up to a hard ceiling) to report rowCount. Default 50.
   *  `Infinity` keeps every row (the evaluator needs full results). */
  maxRows?: number;
  /** Longest kept text cell, characters; longer cells are cut and marked. Default 1000. */
  maxCellChars?: number;
  /**
   * Keep every INTEGER as a bigint (default: a number when it fits in 2^53), so a JS number in the rows is always a
   * REAL and an export can write 14.0 for a REAL and 14 for an INTEGER.
   */
  integersAsBigint?: boolean;
}

export interface ExecResult {
  ok: boolean;
  errorClass: ErrorClass | null;
  /** Message in SQLite's own words ("no such column: x") for `sql`; a clear sentence for the other classes. */
  error: string | null;
  columns: string[];
  rows: Cell[][];
  /** Rows the statement produced that were seen (≥ rows.length when truncated). */
  rowCount: number;
  /** True when rows were dropped (row cap) or cells were cut (cell cap). */
  truncated: boolean;
  /** True when a text or blob cell was cut at the cell cap (rows dropped at the row cap do not set it). */
  cellsCut?: boolean;
  /** Time spent by the runner on this statement, ms. */
  ms: number;
  /** False when counting stopped at ROW_COUNT_CEILING, so rowCount is a lower bound. */
  rowCountExact?: boolean;
  /** Storage classes seen in each kept column, so renderers can type columns the way Python's sqlite3 + pandas do. */
  columnStorage?: StorageSet[];
  /** Set when the file could not be opened as a database (errorClass is then `sql`): the caller's input is wrong. */
  openErrorKind?: import('./open').OpenErrorKind;
}

/** Which SQLite storage classes occur in a column of a result. */
export interface StorageSet {
  integer: boolean;
  real: boolean;
  text: boolean;
  blob: boolean;
  null: boolean;
}
