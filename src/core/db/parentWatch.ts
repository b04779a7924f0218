// Makes a worker process die with its parent however the parent dies (SIGKILL included). The IPC channel's
// 'disconnect' cannot be relied on: while a runaway query holds this process's main thread inside SQLite, no event
// runs. So a small thread of its own — whose event loop no query blocks — checks the parent's pid twice a second and
// kills this process once the parent is gone (the process was re-parented).
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
  if (parent <= 1) return; // already orphaned or started by init: nothing to watch
  const watcher = new Worker(WATCHER, { eval: true, workerData: { parent, self: process.pid, everyMs } });
  watcher.unref();
}
