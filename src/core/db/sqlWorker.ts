// A SQL worker process: runs one statement at a time for the pool. It can be SIGKILLed at any moment (timeouts),
// which is the only way to stop a synchronous better-sqlite3 query, so it holds nothing that must be cleaned up.
import { HandleCache } from './handleCache';
import { runStatement, failure } from './runStatement';
import { DatabaseOpenError } from './open';
import { HANDLE_CACHE_SIZE, BUSY_TIMEOUT_MS } from './limits';
import type { WorkerRequest, WorkerMessage } from './protocol';
import type { ExecRequest } from './types';
import { dieWithParent } from './parentWatch';

const handles = new HandleCache(HANDLE_CACHE_SIZE, BUSY_TIMEOUT_MS);
// Errors here are reported by their message alone (SQLite's words); a stack trace for each failed prepare (a wrong
// column, a double-quoted string retried as a literal) would be captured only to be thrown away.
Error.stackTraceLimit = 0;

function send(msg: WorkerMessage): void {
  process.send?.(msg);
}

function run(id: number, req: ExecRequest): void {
  const started = performance.now();
  let result;
  try {
    result = runStatement(handles.get(req.db), req);
  } catch (err) {
    const ms = performance.now() - started;
    result =
      err instanceof DatabaseOpenError
        ? failure('sql', err.message, ms, { openErrorKind: err.kind })
        : failure('sql', (err as Error)?.message ?? String(err), ms);
  }
  // Sent at once, before the next statement starts: the pool times each statement from its predecessor's result.
  send({ type: 'result', id, result });
}

process.on('message', (msg: WorkerRequest) => {
  for (const job of msg.jobs) run(job.id, job.req);
});

// The pool going away (even by crashing, even while a query runs here) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
dieWithParent();
send({ type: 'ready' });
