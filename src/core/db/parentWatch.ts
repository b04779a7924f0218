// Makes a worker process die with its parent however the parent dies (SIGKILL included). The IPC channel's
// 'disconnect' cannot be relied on: while a runaway query holds this process's main thread inside SQLite, no event
// runs. Where the pool could start the worker under `setpriv --pdeathsig KILL` (Linux), the kernel kills it when the
// parent dies; only the moment before that was set needs a look (QUARRY_POOL_PID names the parent it must have).
// Elsewhere a small thread of its own — whose event loop no query blocks — checks the parent's pid twice a second
// and kills this process once the parent is gone (the process was re-parented).
import { Worker } from 'node:worker_threads';

const WATCHER = `
const { workerData } = require('node:worker_threads');
setInterval(() => {
  if (process.ppid !== workerData.parent) process.kill(workerData.self, 'SIGKILL');
}, workerData.everyMs);
`;

/** Starts the watcher thread (it keeps no event loop alive: unref'd). */
export function dieWithParent(everyMs = 500): void {
  const parent = process.ppid;
  const pool = Number(process.env.QUARRY_POOL_PID ?? 0);
  if (pool > 0) {
    // The parent-death signal is set; a parent that died before it was set has already left this process orphaned.
    if (parent !== pool) process.exit(0);
    return;
  }
  if (parent <= 1) return; // already orphaned or started by init: nothing to watch
  const watcher = new Worker(WATCHER, { eval: true, workerData: { parent, self: process.pid, everyMs } });
  watcher.unref();
}
