// Reward diagnostics as a new user would: the packaged extension in a fresh code-server, a trajectory file in the
// workspace made by real runs of the core agent loop (test/support/diagnosticsFixture.ts: a scripted model, the real
// sandbox pool, the workspace's clinic database). "Quarry: Open Reward Diagnostics…" from the palette, the file
// picked from the quick pick; the run's charts; a flag item opened with the mouse; the trajectory's term bar, ODT
// trees and clause F1; back by keyboard; the panel switched; the view back after being hidden. Screenshots in
// test-artifacts/screenshots/diagnostics-*.png.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Frame } from 'playwright-core';
import { createSqlPool } from '../../src/core/db/pool';
import { diagnosticsRun } from '../support/diagnosticsFixture';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

let ed: Editor;
let app: Frame;
let fixture: TrajectoryRecord[] = [];

before(async () => {
  ed = await openEditor({ name: 'diagnostics', viewport: { width: 1500, height: 1000 } });
  const pool = createSqlPool({ size: 1, spares: 0 });
  try {
    const records = await diagnosticsRun(pool, join(ed.workspace, 'data', 'clinic.sqlite'));
    fixture = records;
    mkdirSync(join(ed.workspace, 'runs'), { recursive: true });
    writeFileSync(
      join(ed.workspace, 'runs', 'clinic-run.jsonl'),
      records.map((r) => JSON.stringify(r) + '\n').join(''),
    );
  } finally {
    await pool.close();
  }
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('diagnostics', () => ed);

/** Canvases chart.js drew into (a drawn chart has a non-empty bitmap). */
async function drawnCharts(frame: Frame, within: string): Promise<number> {
  return frame.locator(`${within} canvas`).evaluateAll(
    (els) =>
      els.filter((c) => {
        const canvas = c as HTMLCanvasElement;
        if (canvas.width === 0 || canvas.height === 0) return false;
        const ctx = canvas.getContext('2d');
        if (!ctx) return false;
        const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
        return false;
      }).length,
  );
}

test('Open Reward Diagnostics from the palette, pick the run file: charts, flags and the trajectory list', async () => {
  await ed.runCommand('Quarry: Open Reward Diagnostics…');
  await ed.pick(/clinic-run\.jsonl/);
  app = await ed.webview('Integrity flags', 60_000);
  await app.locator('#run-charts canvas').first().waitFor({ timeout: 30_000 });
  assert.equal(await drawnCharts(app, '#run-charts'), 4, 'reward, turns, EX by hardness and term charts are drawn');
  const header = await app.locator('#header').innerText();
  assert.match(header, /runs\/clinic-run\.jsonl · 5 records/);
  const run = await app.locator('section', { hasText: 'EX 80.0%' }).first().innerText();
  // SkyRL trajectories open on the skyrl panel (their own protocol's), not sqltrail.
  assert.match(run, /5 scored with\s+skyrl/);
  assert.equal(await app.locator('#trajectory-list [role="option"]').count(), 5);
  await ed.screenshot('diagnostics-run');
  await app.locator('#groups').scrollIntoViewIfNeeded();
  assert.ok((await drawnCharts(app, '#groups')) === 2, 'advantage and spread histograms are drawn');
  await ed.screenshot('diagnostics-run-groups');
  await app.locator('#trajectories').scrollIntoViewIfNeeded();
  await ed.screenshot('diagnostics-list');
});

test(
  'the Table 8 mismatch card: four categories and Avg. Err.; a tag link filters the list to its ' + 'trajectories',
  async () => {
    await app.locator('#mismatch').scrollIntoViewIfNeeded();
    const card = await app.locator('#mismatch').innerText();
    assert.match(card, /Structural mismatches \(Progress-SQL Table 8\)/);
    assert.match(card, /All trajectories: 5 of 5 compared/);
    for (const c of ['SELECT', 'JOIN', 'WHERE', 'GROUP', 'Avg. Err.']) assert.ok(card.includes(c), c);
    await ed.screenshot('diagnostics-mismatch');
    // top-b's final SQL misses the gold's GROUP BY (its ODT tags are checked in the trajectory test below).
    await app.locator('#mismatch a', { hasText: 'GROUP_BY_MISSING' }).first().click();
    await app.locator('#trajectory-list [data-id="top-b"]').waitFor({ timeout: 15_000 });
    const shown = await app.locator('#trajectory-count').innerText();
    const n = Number(/^(\d+) of 5/.exec(shown)?.[1]);
    assert.ok(n >= 1 && n < 5, shown);
    await app.locator('#trajectories').scrollIntoViewIfNeeded();
    await ed.screenshot('diagnostics-mismatch-filter');
    // Empty the filter again for the tests that follow.
    await app.locator('body').press('f');
    await app.page().keyboard.press('ControlOrMeta+a');
    await app.page().keyboard.press('Backspace');
    await app.locator('#trajectory-count', { hasText: '5 of 5' }).waitFor({ timeout: 15_000 });
  },
);

test('sqltrail, then back to skyrl: a zero-variance group is flagged and its items link to them', async () => {
  // The toolkit's dropdown: open it with the mouse, choose the option (sqltrail, then back to the file's skyrl).
  await app.locator('#panel-picker').click();
  await app.locator('#panel-picker vscode-option[value="sqltrail"]').click();
  await app
    .locator('section', { hasText: /5 scored with\s+sqltrail/ })
    .first()
    .waitFor({ timeout: 60_000 });
  assert.doesNotMatch(await app.locator('#flags').innerText(), /zero-variance group kids/);
  await app.locator('#panel-picker').click();
  await app.locator('#panel-picker vscode-option[value="skyrl"]').click();
  await app.locator('#flags', { hasText: 'zero-variance group kids' }).waitFor({ timeout: 60_000 });
  const flags = await app.locator('#flags').innerText();
  assert.match(flags, /kids-a/);
  assert.match(flags, /kids-b/);
  await app.locator('#flags').scrollIntoViewIfNeeded();
  await ed.screenshot('diagnostics-flags');
});

test(
  'a trajectory opened from the list with the mouse: ' + 'stacked term bar, ODT trees with mismatches, clause F1',
  async () => {
    await app.locator('#trajectory-list [data-id="top-b"]').click();
    await app.locator('#odt').waitFor({ timeout: 30_000 });
    const head = await app.locator('#trajectory-head').innerText();
    assert.match(head, /Trajectory top-b/);
    assert.match(head, /Execution: wrong/);
    assert.equal(await drawnCharts(app, '#terms'), 1, 'the stacked term bar is drawn');
    const terms = await app.locator('#terms-table').innerText();
    assert.match(terms, /format/);
    assert.match(terms, /exec/);
    const odt = await app.locator('#odt').innerText();
    assert.match(odt, /JOIN_MISSING/);
    assert.ok(
      (await app.locator('#odt-pred .d-node.d-mismatch').count()) >= 1,
      'the predicted SELECT is marked as mismatching',
    );
    assert.ok((await app.locator('#odt-gold .d-diff').count()) >= 1, 'gold items the prediction lacks are highlighted');
    await ed.screenshot('diagnostics-trajectory');
    await app.locator('#odt').scrollIntoViewIfNeeded();
    await ed.screenshot('diagnostics-odt');
    await app.locator('#clauses').scrollIntoViewIfNeeded();
    assert.equal(await drawnCharts(app, '#clauses'), 1, 'the clause F1 chart is drawn');
    await ed.screenshot('diagnostics-clauses');
  },
);

test(
  'by keyboard: r back to the run, End in the list, f to the filter, Tab to the list, Enter opens the row; ' +
    'verification verdicts shown',
  async () => {
    await app.locator('body').press('r');
    await app.locator('#trajectory-list').waitFor({ timeout: 30_000 });
    // The list is one tab stop: arrows move the active row, Enter opens it.
    await app.locator('#trajectory-list').focus();
    await app.page().keyboard.press('End');
    const last = await app.locator('#trajectory-list').getAttribute('aria-activedescendant');
    assert.equal(last, 'row-4');
    await app.locator('body').press('f');
    await app.page().keyboard.type('fees');
    await app.locator('#trajectory-count', { hasText: '1 of 5' }).waitFor();
    assert.equal(await app.locator('#trajectory-list [role="option"]').count(), 1);
    await app.page().keyboard.press('Tab');
    await app.page().keyboard.press('Enter');
    await app.locator('#verification table').waitFor({ timeout: 30_000 });
    const v = await app.locator('#verification').innerText();
    assert.match(v, /E-VERIFY/);
    assert.match(v, /M-VERIFY/);
    await app.locator('#verification').scrollIntoViewIfNeeded();
    await ed.screenshot('diagnostics-verification');
  },
);

test('the view survives being hidden: another editor in front, then back', async () => {
  await ed.runCommand('Preferences: Open Workspace Settings (JSON)');
  await ed.page.locator('.monaco-editor').first().waitFor({ timeout: 15_000 });
  await ed.runCommand('View: Open Previous Editor');
  app = await ed.webview('Trajectory fees-mt', 30_000);
  await app.locator('#verification table').waitFor({ timeout: 15_000 });
  assert.equal(await drawnCharts(app, '#terms'), 1);
  await ed.screenshot('diagnostics-restored');
});

/** Whether some pixel of the first canvas in `selector` has exactly the colour `hex` (#rrggbb): a bar's solid fill. */
async function canvasHasColour(frame: Frame, selector: string, hex: string): Promise<boolean> {
  return frame
    .locator(`${selector} canvas`)
    .first()
    .evaluate((c, want) => {
      const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(want);
      if (!m) return false;
      const [r, g, b] = [m[1], m[2], m[3]].map((x) => parseInt(x, 16));
      const canvas = c as HTMLCanvasElement;
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 0; i < data.length; i += 4)
        if (data[i] === r && data[i + 1] === g && data[i + 2] === b && data[i + 3] === 255) return true;
      return false;
    }, hex);
}

test('charts follow the colour theme: switching to a dark theme redraws them in its chart colours', async () => {
  await app.locator('body').press('r');
  await app.locator('#run-charts canvas').first().waitFor({ timeout: 30_000 });
  const chartBlue = () =>
    app.evaluate(() => getComputedStyle(document.body).getPropertyValue('--vscode-charts-blue').trim());
  const before = await chartBlue();
  assert.ok(
    await canvasHasColour(app, '#run-charts', before),
    `the reward bars are drawn in the theme's chart blue ${before}`,
  );
  await ed.runCommand('Preferences: Color Theme');
  await ed.pick(/^Dark Modern$/);
  await app.waitForFunction(() => document.body.classList.contains('vscode-dark'), undefined, { timeout: 15_000 });
  const after = await chartBlue();
  assert.notEqual(after, before, 'the dark theme has another chart blue');
  await app.waitForFunction(() => document.querySelectorAll('#run-charts canvas').length === 4);
  assert.equal(await drawnCharts(app, '#run-charts'), 4, 'the charts are drawn again after the theme change');
  assert.ok(
    await canvasHasColour(app, '#run-charts', after),
    `the reward bars are redrawn in the dark theme's chart blue ${after}`,
  );
  assert.ok(!(await canvasHasColour(app, '#run-charts', before)), 'no bar keeps the light theme colour');
  await ed.screenshot('diagnostics-dark-theme');
});

test('10,000 trajectories: scored under progress, the list keeps only the rows in view in the page', async () => {
  // 2,000 copies of the five loop-run records, each copy its own group: 10,000 valid records.
  const lines: string[] = [];
  for (let k = 0; k < 2000; k++)
    for (const r of fixture) lines.push(JSON.stringify({ ...r, id: `${r.id}-${k}`, groupId: `${r.groupId}-${k}` }));
  writeFileSync(join(ed.workspace, 'runs', 'large-run.jsonl'), lines.join('\n') + '\n');
  await ed.runCommand('Quarry: Open Reward Diagnostics…');
  await ed.pick(/large-run\.jsonl/);
  app = await ed.webview('10000 records', 180_000);
  await app.locator('#trajectory-count', { hasText: '10000 of 10000' }).waitFor({ timeout: 60_000 });
  // 2,000 zero-variance groups: ten flags shown, the rest behind one disclosure.
  assert.equal(await app.locator('#flags .d-flag').count(), 10);
  await app.locator('#flags summary', { hasText: '1990 more zero-variance-group flag(s)' }).waitFor();
  const rows = () => app.locator('#trajectory-list [role="option"]').count();
  const inPage = await rows();
  assert.ok(inPage > 0 && inPage <= 40, `${inPage} rows in the page for 10,000 trajectories`);
  await app.locator('#trajectory-list').scrollIntoViewIfNeeded();
  await app.locator('#trajectory-list').focus();
  await app.page().keyboard.press('End');
  assert.equal(await app.locator('#trajectory-list').getAttribute('aria-activedescendant'), 'row-9999');
  await app.locator('#row-9999').waitFor({ timeout: 5_000 });
  assert.ok((await rows()) <= 40, 'still only the rows in view after jumping to the end');
  await ed.screenshot('diagnostics-10k-list');
  await app.locator('#row-9999').press('Enter');
  await app.locator('#trajectory-head').waitFor({ timeout: 30_000 });
  await ed.screenshot('diagnostics-10k-trajectory');
});
