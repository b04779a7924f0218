// Workers die with their parent however it dies (issue 9, item 2): the CLI (dist/cli.js, as users run it) is killed
// with KILL, TERM, HUP or INT while its SQL worker runs a runaway query; the worker must be gone soon after. Before
// the fix it stayed, re-parented to init, at 100% CPU.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { repoRoot, tempDir, buildDb } from '../../helpers/fixtures';
import { until } from '../../support/until';

const cli = join(repoRoot, 'dist', 'cli.js');
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const db = buildDb('db-sandbox', { dir: tempDir() });

// The kernel's parent-death signal (setpriv, where installed) and the watcher thread (everywhere else) both.
for (const [watch, env] of [
  ['', {}],
  [' (watcher thread)', { QUARRY_NO_PDEATHSIG: '1' }],
] as const) {
  for (const [command, args] of [
    ['exec', ['--db', db, '--sql', RUNAWAY, '--timeout-ms', '60000']],
    ['exec-batch', ['--in', 'IN', '--out', 'OUT', '--timeout-ms', '60000']],
  ] as const) {
    for (const signal of ['SIGKILL', 'SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
      test(`quarry ${command} killed with ${signal} mid-query leaves no SQL worker behind${watch}`, async () => {
        const dir = tempDir();
        const input = join(dir, 'in.jsonl');
        writeFileSync(input, `${JSON.stringify({ id: 1, db, sql: RUNAWAY })}\n`);
        const argv = args.map((a) => (a === 'IN' ? input : a === 'OUT' ? join(dir, 'out.jsonl') : a));
        const parent = spawn(process.execPath, [cli, command, ...argv], {
          stdio: 'ignore',
          env: { ...process.env, ...env },
        });
        let workers: number[] = [];
        // The worker is busy once it has been started and the parent has handed it the query.
        await until('the SQL worker to start', () => (workers = childrenOf(parent.pid!)).length > 0);
        await new Promise((r) => setTimeout(r, 500));
        workers = childrenOf(parent.pid!);
        assert.ok(workers.length > 0);
        parent.kill(signal);
        await until(`the parent to exit after ${signal}`, () => parent.exitCode !== null || parent.signalCode !== null);
        await until(`workers ${workers.join(', ')} to exit after the parent's ${signal}`, () =>
          workers.every((w) => !alive(w)),
        );
      });
    }
  }
}
