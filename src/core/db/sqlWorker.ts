// A SQL worker process: runs one statement at a time for the pool. It can be SIGKILLed at any moment (timeouts),
// which is the only way to stop a synchronous better-sqlite3 query, so it holds nothing that must be cleaned up.
import { HandleCache } from './handleCache';
import { runStatement, failure } from './runStatement';
import { DatabaseOpenError } from './open';
import { HANDLE_CACHE_SIZE, BUSY_TIMEOUT_MS } from './limits';
import type { WorkerRequest, WorkerMessage } from './protocol';
import { dieWithParent } from './parentWatch';

const handles = new HandleCache(HANDLE_CACHE_SIZE, BUSY_TIMEOUT_MS);

function send(msg: WorkerMessage): void {
  process.send?.(msg);
}

process.on('message', (msg: WorkerRequest) => {
  const started = performance.now();
  let result;
  try {
    result = runStatement(handles.get(msg.req.db), msg.req);
  } catch (err) {
    const ms = performance.now() - started;
    result = err instanceof DatabaseOpenError
      ? failure('sql', err.message, ms, { openErrorKind: err.kind })
      : failure('sql', (err as Error)?.message ?? String(err), ms);
  }
  send({ type: 'result', id: msg.id, result });
});

// The pool going away (even by crashing, even while a query runs here) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
dieWithParent();
send({ type: 'ready' });
