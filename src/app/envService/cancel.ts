// Statements a reward runs are shared: scorings of the same (database, SQL) at once wait on one execution (the scoring
// resources' cache). A client that disconnects cancels the statements it waits on, but only those no other request
// still waits on: each execution has its own AbortController, aborted when the last request holding it goes.
// A database changed on disk since a scoring last looked at it (its file or its -wal: the SQL workers' own test, see
// handleCache.ts) drops every cached execution and analysis, so no reward is computed from a result read before the
// change; training databases do not change, so the caches stay warm there. A scoring over a test suite names every
// database of the suite it reads, so a variant rewritten on disk drops the caches the same way.
import { stampOf } from '../../core/db/handleCache';
import type { SqlPool } from '../../core/db/pool';
import type { ExecResult } from '../../core/db/types';
import { createScoringResources } from '../../core/rewards/resources';
import type { ScoringResources } from '../../core/rewards/types';

interface Interest {
  controller: AbortController;
  holders: number;
}

const keyOf = (db: string, sql: string) => db + '\0' + sql;

/** Databases whose stamps are kept; past it they are forgotten, and the caches with them. */
const MAX_STAMPS = 4096;

export class SharedScoring {
  private readonly interests = new Map<string, Interest>();
  private shared: ScoringResources;
  /** Each database's stamp when a scoring last looked at it. */
  private readonly stamps = new Map<string, string>();

  constructor(
    private readonly pool: SqlPool,
    timeoutMs: number,
  ) {
    this.shared = this.fresh(timeoutMs);
  }

  private fresh(timeoutMs: number): ScoringResources {
    return createScoringResources({
      run: (req) => this.pool.exec(req, this.interests.get(keyOf(req.db, req.sql))?.controller.signal),
      timeoutMs,
    });
  }

  /**
   * The shared resources as one scoring on `dbPath` (a resolved database file, or every file it reads: the database
   * and its test suite's) sees them: fresh ones if a database changed since the last look; its aborting (`signal`)
   * lets go of the executions it waits on.
   */
  view(dbPath: string | readonly string[], signal?: AbortSignal): ScoringResources {
    for (const p of typeof dbPath === 'string' ? [dbPath] : dbPath) this.notice(p);
    const shared = this.shared;
    if (!signal) return shared;
    return {
      timeoutMs: shared.timeoutMs,
      memo: (namespace, key, compute) => shared.memo(namespace, key, compute),
      exec: (db, sql) => this.exec(shared, db, sql, signal),
    };
  }

  /** Starts the caches over when `dbPath` changed on disk since it was last seen (or stamps were forgotten). */
  private notice(dbPath: string): void {
    const stamp = stampOf(dbPath, dbPath);
    const seen = this.stamps.get(dbPath);
    if (seen === stamp) return;
    if (seen !== undefined || this.stamps.size >= MAX_STAMPS) {
      if (this.stamps.size >= MAX_STAMPS) this.stamps.clear();
      this.shared = this.fresh(this.shared.timeoutMs);
    }
    this.stamps.set(dbPath, stamp);
  }

  private exec(shared: ScoringResources, db: string, sql: string, signal: AbortSignal): Promise<ExecResult> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const key = keyOf(db, sql);
    let interest = this.interests.get(key);
    if (!interest) {
      interest = { controller: new AbortController(), holders: 0 };
      this.interests.set(key, interest);
    }
    const held = interest;
    held.holders++;
    let released = false;
    /** Lets go of the execution; true when this was its last holder. */
    const release = (): boolean => {
      if (released) return false;
      released = true;
      signal.removeEventListener('abort', onAbort);
      if (--held.holders > 0) return false;
      if (this.interests.get(key) === held) this.interests.delete(key);
      return true;
    };
    const onAbort = () => {
      if (release()) held.controller.abort();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const p = shared.exec(db, sql);
    p.then(release, release);
    return p;
  }
}
