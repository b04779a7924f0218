// Statements a reward runs are shared: scorings of the same (database, SQL) at once wait on one execution (the scoring
// resources' cache). A client that disconnects cancels the statements it waits on, but only those no other request
// still waits on: each execution has its own AbortController, aborted when the last request holding it goes.
import type { SqlPool } from '../../core/db/pool';
import type { ExecResult } from '../../core/db/types';
import { createScoringResources } from '../../core/rewards/resources';
import type { ScoringResources } from '../../core/rewards/types';

interface Interest {
  controller: AbortController;
  holders: number;
}

const keyOf = (db: string, sql: string) => db + '\0' + sql;

export class SharedScoring {
  private readonly interests = new Map<string, Interest>();
  private readonly shared: ScoringResources;

  constructor(pool: SqlPool, timeoutMs: number) {
    this.shared = createScoringResources({
      run: (req) => pool.exec(req, this.interests.get(keyOf(req.db, req.sql))?.controller.signal),
      timeoutMs,
    });
  }

  /** The shared resources as one request sees them: its aborting lets go of the executions it waits on. */
  view(signal?: AbortSignal): ScoringResources {
    if (!signal) return this.shared;
    return {
      timeoutMs: this.shared.timeoutMs,
      memo: (namespace, key, compute) => this.shared.memo(namespace, key, compute),
      exec: (db, sql) => this.exec(db, sql, signal),
    };
  }

  private exec(db: string, sql: string, signal: AbortSignal): Promise<ExecResult> {
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
    const p = this.shared.exec(db, sql);
    p.then(release, release);
    return p;
  }
}
