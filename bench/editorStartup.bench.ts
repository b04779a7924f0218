// The extension's activation and the first Ask panel open, in a real VS Code (code-server) extension host: runs the
// `startup timings` integration suite alone, five times (each a fresh code-server and window), and keeps the medians.
// Needs code-server and Chromium (bash scripts/editor/ensure-code-server.sh) and `npm run build -- --tests` done.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { repoRoot, writeResult, percentile } from './common';

const runs = Number(process.env.QUARRY_BENCH_RUNS ?? 5);
const work = mkdtempSync(join(tmpdir(), 'quarry-bench-startup-'));
const samples: { activationMs: number; askPanelCommandMs: number; askPanelFirstMessageMs: number }[] = [];
const load: number[] = [];
for (let i = 0; i < runs; i++) {
  const out = join(work, `run-${i}.json`);
  load.push(loadavg()[0]);
  const r = spawnSync(
    process.execPath,
    [join(repoRoot, 'scripts', 'editor', 'run-integration.mjs'), '--no-build', '--grep', 'startup timings'],
    { cwd: repoRoot, encoding: 'utf8', maxBuffer: 256 * 2 ** 20, env: { ...process.env, QUARRY_TIMINGS_OUT: out } },
  );
  if (r.status !== 0 || !existsSync(out)) {
    console.error(
      `editorStartup: run ${i + 1} failed ` +
        `(exit ${r.status}${r.error ? `, ${r.error.message}` : ''}):\n` +
        `${(r.stdout ?? '').slice(-2000)}${r.stderr ?? ''}`,
    );
    process.exit(1);
  }
  samples.push(JSON.parse(readFileSync(out, 'utf8')) as (typeof samples)[number]);
  console.log(`run ${i + 1}: ${JSON.stringify(samples[i])}`);
}
rmSync(work, { recursive: true, force: true });
const median = (k: keyof (typeof samples)[number]) =>
  percentile(
    samples.map((s) => s[k]).sort((a, b) => a - b),
    50,
  );
writeResult('editor-startup', {
  runs,
  medianMs: {
    activation: median('activationMs'),
    askPanelCommand: median('askPanelCommandMs'),
    askPanelFirstMessage: median('askPanelFirstMessageMs'),
  },
  samples,
  loadAverage1m: load,
  notes:
    'activation: from the first line of dist/extension.js to the end of activate(); askPanelFirstMessage: from ' +
    "executing quarry.ask (database given, no question) to the webview's first message reaching the host.",
  command: 'npm run build -- --tests && npm run bench -- editorStartup',
});
