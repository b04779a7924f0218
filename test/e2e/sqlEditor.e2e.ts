// As a data person running their own SQL: a .sql file in the workspace, Ctrl+Enter runs the statement under the
// cursor (the first run asks which database, from the workspace's databases), the Query Results panel pages a
// 9,959-row table built here ("rows 201–400 of 9,959"), a header click sorts the whole table in SQLite (the largest
// duration is the table's largest, not the first page's), and a filter box filters it there; Plan draws the query
// plan as a tree. Ctrl+Enter in a file with no database yet opens the database picker; alias. completes that table's
// columns.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type { Frame } from 'playwright-core';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

const TRIPS = 9959;
let ed: Editor;
let largest: number;
let app: Frame;

before(async () => {
  ed = await openEditor({ name: 'sqlEditor' });
  const db = new Database(join(ed.workspace, 'data', 'trips.sqlite'));
  db.exec(`CREATE TABLE trip(id INTEGER PRIMARY KEY, duration INTEGER, start_station TEXT, fare REAL);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${TRIPS})
    INSERT INTO trip SELECT i, (i * 7919) % 100003, 'station ' || (i % 70), (i % 5) * 1.0 FROM n;`);
  largest = db.prepare('SELECT max(duration) FROM trip').pluck().get() as number;
  const firstPage = db.prepare('SELECT max(duration) FROM (SELECT duration FROM trip LIMIT 200)').pluck().get();
  assert.notEqual(largest, firstPage, 'the fixture puts its largest duration past the first page');
  db.close();
  writeFileSync(
    join(ed.workspace, 'trips-report.sql'),
    '-- longest trips\nSELECT id, duration, start_station, fare FROM trip;\n\nSELECT count(*) FROM trip;\n',
  );
  // A long text column (a note with spaces, a link without) beside short ones: item 8 of issue 32.
  writeFileSync(
    join(ed.workspace, 'notes.sql'),
    '-- trip notes\nSELECT id, ' +
      "'Trip ' || id || ': the rider reported a flat tyre near ' || start_station || " +
      "' and waited twenty minutes for the van, then finished the ride on foot.' AS note, " +
      "'https://bikes.example/trips/' || lower(hex(zeroblob(40))) || '/' || id AS link, start_station, fare " +
      'FROM trip LIMIT 50;\n',
  );
  writeFileSync(
    join(ed.workspace, 'fares.sql'),
    '-- fares\nSELECT fare, count(*) AS trips FROM trip t GROUP BY fare;\n',
  );
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('sqlEditor', () => ed);

const status = () => app.locator('#results-grid-status');
async function statusShows(re: RegExp): Promise<string> {
  for (let i = 0; i < 150; i++) {
    const text = await status()
      .innerText()
      .catch(() => '');
    if (re.test(text)) return text;
    await ed.page.waitForTimeout(200);
  }
  throw new Error(
    `the grid status never matched ${re}: ${await status()
      .innerText()
      .catch(() => '(none)')}`,
  );
}

test('a .sql file bound from the status bar runs the statement under the cursor with Ctrl+Enter', async () => {
  // Opened from the Explorer, as a user would (the file was written after the workbench loaded: refresh first).
  await ed.runCommand('Refresh Explorer');
  const row = ed.page.locator('.part.sidebar .monaco-list-row', { hasText: 'trips-report.sql' }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.dblclick();
  const lines = ed.page.locator('.editor-instance .monaco-editor .view-lines').first();
  await lines.getByText('longest trips').waitFor({ timeout: 30_000 });
  // The status bar item on SQL documents chooses the database (the picker lists the workspace's databases).
  await ed.page.locator('.statusbar-item', { hasText: 'Choose Database' }).first().click();
  await ed.pick(/trips\.sqlite/);
  await lines.getByText('longest trips').click();
  await ed.page.keyboard.press('ArrowDown');
  await ed.page.keyboard.press('Control+Enter');
  app = await ed.webview('Query Results', 60_000);
  assert.match(await statusShows(/of 9,959/), /rows 1–200 of 9,959/);
  // The status bar names the bound database.
  await ed.page.locator('.statusbar-item', { hasText: 'trips.sqlite' }).first().waitFor({ timeout: 15_000 });
  // REAL keeps its type.
  assert.equal(await app.locator('#results-grid tbody tr').first().locator('td').nth(3).innerText(), '1.0');
});

test('paging goes over the whole result', async () => {
  await app.locator('vscode-button[title^="Next page"]').click();
  assert.match(await statusShows(/rows 201–400/), /rows 201–400 of 9,959/);
  assert.equal(await app.locator('#results-grid tbody tr').first().locator('td').first().innerText(), '201');
  await app.locator('vscode-button[title^="Last page"]').click();
  assert.match(await statusShows(/rows 9,801–9,959/), /of 9,959/);
});

test('a header click sorts the whole table on the server', async () => {
  const header = app.locator('#results-grid thead tr').first().locator('th', { hasText: 'duration' });
  await header.click();
  await statusShows(/rows 1–200 of 9,959/);
  await header.click();
  await app.locator('#results-grid thead th[aria-sort="descending"]').waitFor({ timeout: 30_000 });
  const firstDuration = async () => app.locator('#results-grid tbody tr').first().locator('td').nth(1).innerText();
  for (let i = 0; i < 100 && (await firstDuration()) !== String(largest); i++) await ed.page.waitForTimeout(200);
  assert.equal(await firstDuration(), String(largest));
  await ed.screenshot('sql-run-sorted');
});

test('a filter box filters the whole table, and the total follows', async () => {
  const box = app.locator('#results-grid input.q-filter').nth(2);
  await box.fill('station 7');
  const text = await statusShows(/filtered/);
  assert.match(text, /of 143 \(filtered\)/);
});

test("Plan, by keyboard, draws the statement's plan as a tree with the table's size; Alt+P hides it", async () => {
  await app.locator('#plan-toggle').focus();
  await ed.page.keyboard.press('Enter');
  const scan = app.locator('#plan li[data-kind="scan"]').first();
  await scan.waitFor({ timeout: 30_000 });
  const text = await scan.innerText();
  assert.match(text, /full scan/);
  assert.match(text, /SCAN trip/);
  assert.match(text, /trip · 9,959 rows/);
  assert.equal(await app.locator('#plan-toggle').getAttribute('aria-pressed'), 'true');
  // Below the "large table" threshold (10,000 rows): no warning.
  assert.equal(await app.locator('#plan-warnings').count(), 0);
  await ed.screenshot('sql-plan');
  await ed.page.keyboard.press('Alt+KeyP');
  await app.locator('#plan-box').waitFor({ state: 'hidden', timeout: 15_000 });
  assert.equal(await app.locator('#plan-toggle').getAttribute('aria-pressed'), 'false');
});

test('after a window reload Query Results comes back on the same sort and filter, with the whole count', async () => {
  await ed.reloadWindow();
  app = await ed.webview('Query Results', 60_000);
  assert.match(await statusShows(/filtered/), /of 143 \(filtered\)/);
  await app
    .locator('#results-grid thead th[aria-sort="descending"]', { hasText: 'duration' })
    .waitFor({ timeout: 30_000 });
  assert.equal(await app.locator('#results-grid input.q-filter').nth(2).inputValue(), 'station 7');
  await ed.screenshot('sql-results-after-reload');
});

/** The editor showing `text` (a file may open in either editor group). */
const editorWith = (text: string) => ed.page.locator('.editor-instance .monaco-editor .view-lines', { hasText: text });

test('Ctrl+Enter in a .sql file with no database yet opens the database picker, then runs', async () => {
  // The first editor group is the active one, so the file opens there, beside the results.
  await ed.page.locator('.tabs-container .tab', { hasText: 'trips-report.sql' }).first().click();
  await ed.runCommand('Refresh Explorer');
  const row = ed.page.locator('.part.sidebar .monaco-list-row', { hasText: 'fares.sql' }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.dblclick();
  const lines = editorWith('-- fares');
  await lines.getByText('-- fares').waitFor({ timeout: 30_000 });
  await lines.getByText('-- fares').click();
  await ed.page.keyboard.press('ArrowDown');
  await ed.page.keyboard.press('Control+Enter');
  // Nothing is bound: the picker asks, titled with the file, listing the workspace's databases.
  const title = ed.page.locator('.quick-input-widget .quick-input-title');
  await title.getByText('which database does fares.sql run on?').waitFor({ timeout: 15_000 });
  const offered = await ed.page.locator('.quick-input-widget .quick-input-list .monaco-list-row').allInnerTexts();
  assert.ok(offered.some((t) => t.includes('trips.sqlite')) && offered.some((t) => t.includes('clinic.sqlite')));
  await ed.screenshot('sql-unbound-picker');
  await ed.pick(/trips\.sqlite/);
  app = await ed.webview('Query Results', 60_000);
  assert.match(await statusShows(/rows 1–5 of 5/), /rows 1–5 of 5/);
  const fares = await app.locator('#results-grid tbody tr td:first-child').allInnerTexts();
  assert.deepEqual(fares, ['0.0', '1.0', '2.0', '3.0', '4.0'], 'REAL fares keep their type');
});

test("completion after an alias and a dot offers that table's columns", async () => {
  const lines = editorWith('-- fares');
  await lines.getByText('-- fares').click();
  await ed.page.keyboard.press('End');
  await ed.page.keyboard.press('Enter');
  // The alias is declared after the cursor: SELECT | FROM trip t, then t. typed at the cursor.
  await ed.page.keyboard.type('SELECT  FROM trip t');
  for (let i = 0; i < ' FROM trip t'.length; i++) await ed.page.keyboard.press('ArrowLeft');
  await ed.page.keyboard.type('t.');
  const suggest = ed.page.locator('.editor-widget.suggest-widget .monaco-list-row');
  // The dot asks for suggestions; on a slow machine the widget may give up first, so ask again as a user would.
  const shown = await suggest
    .first()
    .waitFor({ timeout: 5_000 })
    .then(
      () => true,
      () => false,
    );
  if (!shown) await ed.page.keyboard.press('Control+Space');
  await suggest.first().waitFor({ timeout: 30_000 });
  const columns = (await suggest.allInnerTexts()).map((t) => t.split(/\s/)[0].trim());
  await ed.screenshot('sql-completion-alias');
  assert.deepEqual([...columns].sort(), ['duration', 'fare', 'id', 'start_station'], `offered: ${columns.join(', ')}`);
  await ed.page.keyboard.press('Escape');
});

test('a long text column is clipped to a readable width: the other columns stay on screen, rows one line', async () => {
  await ed.runCommand('Refresh Explorer');
  const row = ed.page.locator('.part.sidebar .monaco-list-row', { hasText: 'notes.sql' }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.dblclick();
  const lines = editorWith('-- trip notes');
  await lines.getByText('-- trip notes').waitFor({ timeout: 30_000 });
  await lines.getByText('-- trip notes').click();
  await ed.page.keyboard.press('ArrowDown');
  await ed.page.keyboard.press('Control+Enter');
  await ed.pick(/trips\.sqlite/);
  app = await ed.webview('Query Results', 60_000);
  assert.match(await statusShows(/rows 1–50 of 50/), /rows 1–50 of 50/);
  const grid = app.locator('#results-grid');
  const firstRow = grid.locator('tbody tr').first();
  const cells = firstRow.locator('td');
  const widths = await cells.evaluateAll((tds) => tds.map((td) => td.getBoundingClientRect().width));
  const probe = await grid.evaluate((el) => {
    // 40 characters of the cells' font: the widest a clipped cell may be.
    const td = el.querySelector('tbody td') as HTMLElement;
    const span = document.createElement('span');
    span.style.font = getComputedStyle(td).font;
    span.textContent = '0'.repeat(40);
    document.body.append(span);
    const w = span.getBoundingClientRect().width;
    span.remove();
    return { ch40: w, viewport: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth };
  });
  assert.ok(widths[1] <= probe.ch40 + 20, `the note column is ${widths[1]} px, 40 characters are ${probe.ch40}`);
  assert.ok(widths[2] <= probe.ch40 + 20, `the link column is ${widths[2]} px`);
  assert.ok(probe.scroll <= probe.viewport, `the panel never scrolls sideways (${probe.scroll} > ${probe.viewport})`);
  // Every row is one line: as tall as a row of short cells.
  const heights = await grid
    .locator('tbody tr')
    .evaluateAll((trs) => trs.slice(0, 10).map((tr) => Math.round(tr.getBoundingClientRect().height)));
  const lineHeight = await grid
    .locator('thead tr')
    .first()
    .evaluate((tr) => Math.round(tr.getBoundingClientRect().height));
  for (const h of heights) assert.ok(h <= lineHeight + 2, `a row is ${h} px, the header ${lineHeight} px`);
  // The whole value on expand: Enter on the cell, and again to clip it.
  const note = cells.nth(1);
  assert.match(await note.innerText(), /…$/);
  await note.focus();
  await ed.page.keyboard.press('Enter');
  assert.equal(await note.getAttribute('aria-expanded'), 'true');
  assert.match(await note.innerText(), /finished the ride on foot\.$/);
  await ed.screenshot('sql-long-cell-open');
  await ed.page.keyboard.press('Enter');
  assert.match(await note.innerText(), /…$/);
  // Clicking a filter box does not scroll the panel or the grid sideways.
  const scroller = grid.locator('.q-grid-scroll');
  const before = await scroller.evaluate((el) => el.scrollLeft);
  const box = await grid.locator('input.q-filter').nth(2).boundingBox();
  assert.ok(box);
  await ed.page.mouse.click(box.x + 5, box.y + box.height / 2);
  await ed.page.waitForTimeout(300);
  assert.equal(await scroller.evaluate((el) => el.scrollLeft), before);
  assert.equal(await app.evaluate(() => window.scrollX), 0);
  await ed.screenshot('sql-long-text-column');
});
