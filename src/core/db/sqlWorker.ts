// A SQL worker process: runs one statement at a time for the pool. It can be SIGKILLed at any moment (timeouts),
// which is the only way to stop a synchronous better-sqlite3 query, so it holds nothing that must be cleaned up.
import { HandleCache } from './handleCache';
import { runStatement, failure } from './runStatement';
import { DatabaseOpenError } from './open';
import { HANDLE_CACHE_SIZE, BUSY_TIMEOUT_MS } from './limits';
import type { WorkerRequest, WorkerMessage, GroupRequest } from './protocol';
import { createJudge, type JudgeParams } from '../eval/judge';
import type { ExecRequest, ExecResult } from './types';
import { dieWithParent } from './parentWatch';

const handles = new HandleCache(HANDLE_CACHE_SIZE, BUSY_TIMEOUT_MS);
// Errors here are reported by their message alone (SQLite's words); a stack trace for each failed prepare (a wrong
// column, a double-quoted string retried as a literal) would be captured only to be thrown away.
Error.stackTraceLimit = 0;

function send(msg: WorkerMessage): void {
  process.send?.(msg);
}

function execute(req: ExecRequest): ExecResult {
  const started = performance.now();
  try {
    return runStatement(handles.get(req.db), req);
  } catch (err) {
    const ms = performance.now() - started;
    return err instanceof DatabaseOpenError
      ? failure('sql', err.message, ms, { openErrorKind: err.kind })
      : failure('sql', (err as Error)?.message ?? String(err), ms);
  }
}

/** Group reducers by kind: each gets the group's parameters and is fed the results in order. */
const REDUCERS: Record<
  GroupRequest['kind'],
  (params: unknown) => (r: ExecResult) => { value: unknown; last: boolean }
> = {
  eval: (params) => createJudge(params as JudgeParams),
};

function runGroup(id: number, group: GroupRequest): void {
  const reduce = REDUCERS[group.kind](group.params);
  for (let i = 0; i < group.reqs.length; i++) {
    const { value, last } = reduce(execute(group.reqs[i]));
    const done = last || i === group.reqs.length - 1;
    // Each step is reported at once: the pool starts the next statement's budget when it arrives.
    send({ type: 'step', id, value, last: done });
    if (done) return;
  }
}

process.on('message', (msg: WorkerRequest) => {
  for (const job of msg.jobs) {
    // Sent at once, before the next statement starts: the pool times each statement from its predecessor's result.
    if ('group' in job) runGroup(job.id, job.group);
    else send({ type: 'result', id: job.id, result: execute(job.req) });
  }
});

// The pool going away (even by crashing, even while a query runs here) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
dieWithParent();
send({ type: 'ready' });
