// Every cap the sandbox applies, in one place so the CLI, docs and tests agree on them.

export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_ROWS = 50;
export const DEFAULT_MAX_CELL_CHARS = 1000;

/**
 * Rows are counted past maxRows (without being kept) up to this many, so rowCount is exact for all but huge results.
 */
export const ROW_COUNT_CEILING = 100_000;

/** Kept cells (rows × columns) above which a result is refused as `resource`, even with maxRows = Infinity. */
export const MAX_KEPT_CELLS = 1_000_000;
/** Characters/bytes of kept cell data above which a result is refused as `resource`. */
export const MAX_KEPT_BYTES = 64 * 2 ** 20;

/**
 * Data-segment limit (RLIMIT_DATA, set with prlimit(1) where available) of each worker process. better-sqlite3
 * builds SQLite with SQLITE_DEFAULT_MEMSTATUS=0, which makes PRAGMA hard_heap_limit inert, so the OS caps SQLite's
 * allocations instead: a memory bomb gets SQLITE_NOMEM (worker survives) or kills its worker (replaced).
 * Single values are also bounded by SQLite's maximum string/blob length (SQLITE_TOOBIG).
 */
export const WORKER_DATA_LIMIT_BYTES = 1.5 * 2 ** 30;
/** V8 heap of each worker (--max-old-space-size, MiB); a worker that still runs out dies and is replaced. */
export const WORKER_OLD_SPACE_MB = 768;

/** Open handles each worker keeps (least recently used closed first). */
export const HANDLE_CACHE_SIZE = 16;
/** How long a statement waits for another process's lock before failing as "database is locked". */
export const BUSY_TIMEOUT_MS = 200;
