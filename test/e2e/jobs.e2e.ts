// Training jobs as a user follows them: the packaged extension in a fresh code-server, a real job on the `local`
// target (a small Node program appending a metrics line every half second, submitted through app/jobs the way
// `quarry jobs submit` does). "Quarry: Show Job" opens its panel from the palette; the reward chart gains points while
// the panel is open; the window is reloaded; the job is still listed running in the Training Jobs view, the status
// bar still counts it, and its panel comes back and keeps growing. Screenshots in
// test-artifacts/screenshots/jobs-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Frame } from 'playwright-core';
import { JobStore, cancelJob, submitJob } from '../../src/app/jobs';
import type { JobRecord } from '../../src/core/training/jobs/job';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

let ed: Editor;
let store: JobStore;
let job: JobRecord;

before(async () => {
  ed = await openEditor({ name: 'jobs', viewport: { width: 1400, height: 950 } });
  store = new JobStore(ed.workspace);
  const program =
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the child program's own template literal
    'const fs = require("fs"); let s = 0; setInterval(() => { s++; console.log(`step ${s}`); ' +
    'fs.appendFileSync("out/metrics.jsonl", JSON.stringify({ step: s, reward: Math.log(1 + s), loss: 3 / s, ' +
    'lr: s === 1 ? 0 : 1e-5, entropy: 1 / (1 + s / 10) }) + "\\n"); }, 500);';
  job = await submitJob(store, { target: 'local', name: 'growing run', command: [process.execPath, '-e', program] });
});
after(async () => {
  if (job) await cancelJob(store, job.id, 2000).catch(() => {});
  await ed?.close();
});
screenshotAfterEach('jobs', () => ed);

/** The step of the last point the reward chart draws now (a long run is thinned to a few hundred points). */
async function rewardLastStep(app: Frame): Promise<number> {
  const plot = app.locator('figure[data-metric="reward"] canvas');
  await plot.waitFor({ timeout: 30_000 });
  return Number(await plot.getAttribute('data-last-step'));
}

/** Waits until the reward chart draws a later step than now: the panel follows the running job. */
async function pointsGrow(app: Frame): Promise<[number, number]> {
  const first = await rewardLastStep(app);
  await app.waitForFunction(
    (n) => Number(document.querySelector('figure[data-metric="reward"] canvas')?.getAttribute('data-last-step')) > n,
    first,
    { timeout: 30_000 },
  );
  return [first, await rewardLastStep(app)];
}

test('Show Job from the palette: the header, and the charts gain points while the panel is open', async () => {
  await ed.runCommand('Quarry: Show Job');
  await ed.pick(/growing run/);
  const app = await ed.webview(/growing run/, 60_000, 'h1');
  assert.match(await app.locator('#job-status').innerText(), /running/);
  const [before, after] = await pointsGrow(app);
  assert.ok(after > before, `the chart went from step ${before} to ${after}`);
  const charts = await app
    .locator('figure[data-metric]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-metric')));
  assert.deepEqual(charts.sort(), ['entropy', 'loss', 'lr', 'reward'], 'a chart for every metric the job writes');
  assert.match(await app.locator('#log-tail').innerText(), /step \d+/);
  await ed.screenshot('jobs-panel');
  // Zoom by keyboard on a chart: the range fields follow.
  await app.locator('figure[data-metric="reward"]').focus();
  await ed.page.keyboard.press('+');
  assert.notEqual(await app.locator('#range-from').inputValue(), '');
  await ed.page.keyboard.press('0');
  assert.equal(await app.locator('#range-from').inputValue(), '');
});

test('charts as in TensorBoard: hover, drag and wheel zoom, smoothing, log axis; lr from 0 stays at 0', async () => {
  const app = await ed.webview(/growing run/, 60_000, 'h1');
  const reward = app.locator('figure[data-metric="reward"] canvas');
  await reward.waitFor({ timeout: 30_000 });
  // The learning rate warms up from 0: its axis starts at 0, not below (it was padded to −5e−7).
  const lrMin = Number(await app.locator('figure[data-metric="lr"] canvas').getAttribute('data-y-min'));
  assert.equal(lrMin, 0, `lr axis from ${lrMin}`);
  // Pointing at a line names the step and the value under the pointer.
  const box = await reward.boundingBox();
  assert.ok(box);
  await ed.page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
  const readout = app.locator('figure[data-metric="reward"] .q-chart-readout');
  await readout.filter({ hasText: /step \d+: growing run: \d/ }).waitFor({ timeout: 15_000 });
  // Dragging across the plot shows only those steps, on every chart.
  await ed.page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
  await ed.page.mouse.down();
  await ed.page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2, { steps: 6 });
  await ed.page.mouse.up();
  const from = Number(await app.locator('#range-from').inputValue());
  const to = Number(await app.locator('#range-to').inputValue());
  assert.ok(to > from && from > 0, `zoomed to steps ${from}–${to}`);
  await ed.screenshot('jobs-zoomed');
  await app.locator('#range-reset').click();
  assert.equal(await app.locator('#range-from').inputValue(), '');
  // The wheel zooms in around the step under the pointer (steps left of it stay left), and out again.
  await ed.page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
  await ed.page.mouse.wheel(0, -240);
  let zoomed = { from: NaN, to: NaN };
  for (let i = 0; i < 50 && !(zoomed.to > zoomed.from); i++) {
    zoomed = {
      from: Number((await app.locator('#range-from').inputValue()) || NaN),
      to: Number((await app.locator('#range-to').inputValue()) || NaN),
    };
    if (!(zoomed.to > zoomed.from)) await ed.page.waitForTimeout(200);
  }
  assert.ok(zoomed.to > zoomed.from, `the wheel zoomed in: ${JSON.stringify(zoomed)}`);
  await app.locator('#range-reset').click();
  // Smoothing draws the raw line faint behind the smoothed one.
  assert.equal(await reward.getAttribute('data-lines'), '1');
  await app.locator('#smoothing').fill('0.8');
  await app.locator('figure[data-metric="reward"] canvas[data-lines="2"]').waitFor({ timeout: 15_000 });
  // A log axis where every value is above 0 (reward), not where one is 0 (lr).
  await app.locator('#log-scale').check();
  await app.locator('figure[data-metric="reward"][data-scale="log"]').waitFor({ timeout: 15_000 });
  assert.equal(await app.locator('figure[data-metric="lr"]').getAttribute('data-scale'), 'linear');
  await ed.screenshot('jobs-smoothed-log');
  await app.locator('#log-scale').uncheck();
  await app.locator('#smoothing').fill('0');
});

test('after a window reload the job is still listed and followed, and its panel comes back', async () => {
  await ed.reloadWindow();
  const view = await ed.openActivityView('Quarry');
  const row = view.locator('.monaco-list-row', { hasText: 'growing run' }).first();
  await row.waitFor({ timeout: 60_000 });
  await ed.page.waitForFunction(
    () =>
      Array.from(document.querySelectorAll('.monaco-list-row')).some((r) =>
        /growing run.*running · local · .* · step \d+/s.test((r as HTMLElement).innerText),
      ),
    undefined,
    { timeout: 30_000 },
  );
  const status = ed.page.locator('.statusbar-item', { hasText: /1 job · step \d+/ });
  await status.first().waitFor({ timeout: 30_000 });
  const app = await ed.webview(/growing run/, 60_000, 'h1');
  const [before, after] = await pointsGrow(app);
  assert.ok(after > before, `the chart went from step ${before} to ${after} after the reload`);
  await ed.screenshot('jobs-after-reload');
});
