// Labeling as a new user would, by keyboard: the packaged extension in a fresh code-server, a trajectory file in the
// workspace made by real runs of the core agent loop (test/support/diagnosticsFixture.ts: a scripted model, the real
// sandbox pool, the workspace's clinic database). "Quarry: Label Trajectories…" from the palette, the file picked
// from the quick pick; verdicts with 1/2, next with j, a corrected SQL typed after e and run with Ctrl+Enter (matches
// the gold), a tag toggled from the keyboard after t, saved with s; the shortcuts with ?; an unsaved note back after
// the panel was hidden; the labels read from .quarry/labels.sqlite. Screenshots in
// test-artifacts/screenshots/labeling-*.png.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type { Frame } from 'playwright-core';
import { createSqlPool } from '../../src/core/db/pool';
import { diagnosticsRun, GOLD_TOP, Q_TOP } from '../support/diagnosticsFixture';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

let ed: Editor;
let app: Frame;

before(async () => {
  ed = await openEditor({ name: 'labeling', viewport: { width: 1500, height: 1000 } });
  const pool = createSqlPool({ size: 1, spares: 0 });
  try {
    const records = await diagnosticsRun(pool, join(ed.workspace, 'data', 'clinic.sqlite'));
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
screenshotAfterEach('labeling', () => ed);

async function key(k: string): Promise<void> {
  await ed.page.keyboard.press(k);
}

async function waitText(selector: string, text: string | RegExp, timeout = 30_000): Promise<void> {
  await app.locator(selector, { hasText: text }).first().waitFor({ timeout });
}

function storeLabels(): {
  id: string;
  verdict: string | null;
  corrected: string | null;
  note: string;
  tags: string | null;
}[] {
  const db = new Database(join(ed.workspace, '.quarry', 'labels.sqlite'), { readonly: true });
  try {
    return db
      .prepare(
        `SELECT l.trajectory_id AS id, l.verdict, l.corrected_sql AS corrected, l.note,
      (SELECT group_concat(tag, ',') FROM (SELECT tag FROM label_tags t ` +
          `WHERE t.trajectory_id = l.trajectory_id ORDER BY tag)) AS tags
      FROM labels l ORDER BY l.trajectory_id`,
      )
      .all() as never;
  } finally {
    db.close();
  }
}

test('Label Trajectories from the palette: the queue opens on the first unlabeled trajectory', async () => {
  await ed.runCommand('Quarry: Label Trajectories…');
  await ed.pick(/clinic-run\.jsonl/);
  app = await ed.webview('labeled', 60_000);
  await waitText('#l-question', Q_TOP);
  await waitText('#l-progress', '0 / 5 labeled');
  await waitText('#l-where', 'item 1 of 5');
  assert.equal((await app.locator('.l-chip').count()) >= 7, true, 'the built-in failure modes are offered');
  await ed.screenshot('labeling-open');
});

test('by keyboard: 1 marks correct, saves, moves on; 2 too; e + Ctrl+Enter runs a corrected SQL', async () => {
  // Focus the panel's document (not a field) so the shortcuts reach it.
  await app.locator('#l-question').click();
  await key('1');
  await waitText('#l-progress', '1 / 5 labeled');
  await waitText('#l-where', 'item 2 of 5');
  assert.equal(await app.locator('#l-verdict-correct').getAttribute('aria-pressed'), 'false', 'a fresh item');
  await key('2');
  await waitText('#l-progress', '2 / 5 labeled');
  await waitText('#l-where', 'item 3 of 5');
  await key('k');
  await waitText('#l-where', 'item 2 of 5');
  assert.equal(await app.locator('#l-verdict-incorrect').getAttribute('aria-pressed'), 'true');
  await key('e');
  await ed.page.keyboard.type(GOLD_TOP);
  await key('Control+Enter');
  await waitText('#l-match', /Matches the gold result/);
  await app.locator('#l-grid table').waitFor();
  await key('Escape');
  await key('t');
  // wrong join is the fourth built-in tag: three steps right from the first.
  for (let i = 0; i < 3; i++) await key('ArrowRight');
  await key('Space');
  assert.equal(await app.locator('.l-chip[data-tag="wrong join"]').getAttribute('aria-pressed'), 'true');
  await waitText('#l-status', /Unsaved changes/);
  await ed.screenshot('labeling-corrected');
  await key('s');
  await waitText('#l-status', /^Saved (correct|incorrect)/);
  const labels = storeLabels();
  assert.deepEqual(
    labels.map((l) => [l.id, l.verdict]),
    [
      ['top-a', 'correct'],
      ['top-b', 'incorrect'],
    ],
  );
  assert.equal(labels[1].corrected, GOLD_TOP);
  assert.equal(labels[1].tags, 'wrong join');
});

test('? shows the shortcuts; k goes back to the labeled trajectory with its verdict', async () => {
  await key('?');
  await app.locator('#l-shortcuts').waitFor({ state: 'visible' });
  assert.match(await app.locator('#l-shortcuts').innerText(), /Ctrl\+Enter/);
  await ed.screenshot('labeling-shortcuts');
  await key('?');
  await app.locator('#l-shortcuts').waitFor({ state: 'hidden' });
  await key('k');
  await waitText('#l-where', 'item 1 of 5');
  assert.equal(await app.locator('#l-verdict-correct').getAttribute('aria-pressed'), 'true');
});

test('an unsaved note survives the panel being hidden and shown again', async () => {
  await app.locator('#l-note').click();
  await ed.page.keyboard.type('checked by hand');
  await waitText('#l-status', /Unsaved changes/);
  await ed.runCommand('File: New Untitled Text File');
  await ed.page.waitForTimeout(500);
  await ed.runCommand('View: Open Previous Editor');
  app = await ed.webview('labeled', 60_000);
  await waitText('#l-where', 'item 1 of 5');
  assert.equal(await app.locator('#l-note').inputValue(), 'checked by hand');
  await app.locator('#l-question').click();
  await key('s');
  await waitText('#l-status', /^Saved (correct|incorrect)/);
  assert.equal(storeLabels().find((l) => l.id === 'top-a')?.note, 'checked by hand');
  await ed.screenshot('labeling-restored');
});

test('by mouse: Next, Unsure, a new tag, a note and Save', async () => {
  await app.locator('#l-next').click();
  await waitText('#l-where', 'item 2 of 5');
  await app.locator('#l-next').click();
  await waitText('#l-where', 'item 3 of 5');
  await app.locator('#l-verdict-unsure').click();
  await waitText('#l-progress', '3 / 5 labeled');
  await app.locator('#l-new-tag').click();
  await ed.page.keyboard.type('Needs Evidence');
  await app.locator('#l-add-tag').click();
  await app.locator('.l-chip[data-tag="needs evidence"][aria-pressed="true"]').waitFor();
  await app.locator('.l-chip[data-tag="value mismatch"]').click();
  await app.locator('#l-note').click();
  await ed.page.keyboard.type('born >= 2011 is the same set here');
  await app.locator('#l-save').click();
  await waitText('#l-status', /^Saved unsure/);
  const row = storeLabels().find((l) => l.id === 'kids-a');
  assert.deepEqual(row && [row.verdict, row.tags, row.note], [
    'unsure',
    'needs evidence,value mismatch',
    'born >= 2011 is the same set here',
  ]);
  await ed.screenshot('labeling-mouse');
});

test(
  'a corrected SQL of 1,234 rows: the grid pages the whole result (Last, sort, a column filter), ' +
    'Export CSV writes every row',
  async () => {
    // Item 3 (kids-a, gold `SELECT count(*) …`): a result far past one page, and not the gold's.
    await app.locator('#l-question').click();
    await key('e');
    // Typing before the focus has reached the box loses the first keys: wait for it.
    await app.waitForFunction(() => document.activeElement?.tagName === 'TEXTAREA', undefined, { timeout: 15_000 });
    await key('Control+A');
    await ed.page.keyboard.type(
      'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1234) SELECT i, i * 2 AS twice FROM n',
    );
    await key('Control+Enter');
    await waitText('#l-match', /Differs from the gold result/);
    const grid = app.locator('#l-grid');
    const status = app.locator('#l-grid-status');
    const firstCells = () => grid.locator('tbody tr td:first-child').allInnerTexts();
    await waitText('#l-grid-status', /^rows 1–200 of 1,234 /);
    assert.equal(await grid.locator('tbody tr').count(), 200, 'one page of 200 rows');
    // Last page (the » button): the rows past the 500 the panel used to keep.
    await grid.locator('vscode-button[title^="Last page"]').click();
    await waitText('#l-grid-status', /^rows 1,201–1,234 of 1,234 /);
    const last = await firstCells();
    assert.deepEqual([last.length, last[0], last.at(-1)], [34, '1201', '1234']);
    // Previous page, then the header sorts the whole result in SQLite (a second click reverses it).
    await grid.locator('vscode-button[title^="Previous page"]').click();
    await waitText('#l-grid-status', /^rows 1,001–1,200 of 1,234 /);
    const header = grid.locator('thead tr').first().locator('th', { hasText: 'twice' });
    await header.click();
    await grid.locator('thead th[aria-sort="ascending"]').waitFor({ timeout: 30_000 });
    await waitText('#l-grid-status', /^rows 1–200 of 1,234 /);
    await header.click();
    await grid.locator('thead th[aria-sort="descending"]').waitFor({ timeout: 30_000 });
    for (let i = 0; i < 100 && (await firstCells())[0] !== '1234'; i++) await ed.page.waitForTimeout(100);
    assert.equal((await firstCells())[0], '1234', 'the largest first, from the whole result');
    // A column filter, run in SQLite over the whole result.
    await grid.locator('input.q-filter').first().fill('>1200');
    await waitText('#l-grid-status', /^rows 1–34 of 34 \(filtered\)/);
    assert.deepEqual((await firstCells()).slice(0, 2), ['1234', '1233']);
    await ed.screenshot('labeling-big-result');
    // Export CSV: every row the grid stands for (filtered and sorted as shown), through the save dialog.
    await grid.locator('input.q-filter').first().fill('');
    await waitText('#l-grid-status', /^rows 1–200 of 1,234 ·/);
    await grid.locator('vscode-button', { hasText: 'Export CSV…' }).click();
    await ed.saveDialogProposes('kids-a-corrected.csv');
    await ed.page.keyboard.press('Enter');
    await waitText('#l-grid-export', /exported 1,234 rows to kids-a-corrected\.csv/);
    const csv = readFileSync(join(ed.workspace, 'kids-a-corrected.csv'), 'utf8').trimEnd().split('\r\n');
    assert.deepEqual([csv.length, csv[0], csv[1], csv.at(-1)], [1235, 'i,twice', '1234,2468', '1,2']);
    assert.match(await status.innerText(), /of 1,234/);
    // Hidden and shown again (its webview reloads): the run's verdict and its grid over the whole result come back.
    await ed.runCommand('File: New Untitled Text File');
    await ed.page.waitForTimeout(500);
    await ed.runCommand('View: Open Previous Editor');
    app = await ed.webview('labeled', 60_000);
    await waitText('#l-match', /Differs from the gold result/);
    await waitText('#l-grid-status', /^rows 1–200 of 1,234 /);
    assert.equal(await app.locator('#l-grid tbody tr').count(), 200);
  },
);
