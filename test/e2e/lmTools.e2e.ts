// Quarry's language-model tools in the real editor: "Quarry: Run a Language-Model Tool…" lists the tools VS Code
// knows (vscode.lm.tools) and calls one through vscode.lm.invokeTool, as an agent would. VS Code asks before the
// statement runs (its confirmation dialog shows the SQL); declined, nothing runs; accepted, the observation appears,
// the call is appended to the trajectory store as an agent-mode step, and "Open in Query Results" opens it in the
// paged grid. Screenshots in test-artifacts/screenshots/lmtools-*.png.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openEditor, screenshotAfterEach, type Editor } from './harness';
import { validateTrajectory } from '../../src/core/trajectories/validate';

const SQL = "SELECT name FROM author WHERE country = 'Poland' ORDER BY name";
const TOOLS = [
  'quarry_ask',
  'quarry_describe_schema',
  'quarry_explain_plan',
  'quarry_list_databases',
  'quarry_run_sql',
];

let ed: Editor;
before(async () => {
  ed = await openEditor({ name: 'lmTools', samples: true });
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('lmtools', () => ed);

const store = () => join(ed.workspace, '.quarry', 'trajectories', 'asked.jsonl');
function storedRecords(): Record<string, unknown>[] {
  if (!existsSync(store())) return [];
  return readFileSync(store(), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Runs the command up to the SQL prompt of quarry_run_sql on the bookshop sample, and types `sql`. */
async function invokeRunSql(sql: string): Promise<void> {
  await ed.runCommand('Quarry: Run a Language-Model Tool…');
  const rows = ed.page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  await rows.first().waitFor({ timeout: 30_000 });
  // Each row's label is a tool's name (its detail, the model description, is text of its own).
  const listed = (await rows.locator('.label-name').allInnerTexts())
    .map((t) => t.trim())
    .filter((t) => /^\w+$/.test(t));
  assert.deepEqual([...listed].sort(), TOOLS, 'vscode.lm.tools lists every Quarry tool');
  await ed.pick('quarry_run_sql');
  await ed.pick(/bookshop\.sqlite/);
  await ed.answer(sql);
}

const dialog = () => ed.page.locator('.monaco-dialog-box');

test('the confirmation shows the statement before it runs; declined, nothing runs or is recorded', async () => {
  await invokeRunSql(SQL);
  await dialog().waitFor({ timeout: 30_000 });
  const text = (await dialog().innerText()).replace(/\s+/g, ' ');
  assert.match(text, /Run this SQL on samples\/bookshop\.sqlite\?/);
  assert.ok(text.includes(SQL), text);
  assert.match(text, /read-only in its sandbox/);
  await ed.screenshot('lmtools-confirmation');
  await dialog().locator('.dialog-buttons .monaco-button', { hasText: 'Cancel' }).click();
  await ed.notification(/quarry_run_sql was not run/, 30_000);
  assert.equal(storedRecords().length, 0);
});

test('accepted, the observation appears, a trajectory step is appended, and it opens in Query Results', async () => {
  await invokeRunSql(SQL);
  await dialog().waitFor({ timeout: 30_000 });
  await dialog().locator('.dialog-buttons .monaco-button', { hasText: /^Yes$/ }).click();
  const lines = ed.page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'Olga Tokarczuk' });
  await lines.first().waitFor({ timeout: 60_000 });
  // Monaco draws spaces as no-break spaces.
  const shown = (await lines.first().innerText()).replace(/\u00a0/g, ' ');
  assert.match(shown, /Wisława Szymborska/);
  assert.match(shown, /\(2 rows, [\d.]+ ms\)/);
  await ed.screenshot('lmtools-result');

  let records: Record<string, unknown>[] = [];
  for (let i = 0; i < 50 && records.length === 0; i++) {
    records = storedRecords();
    if (!records.length) await ed.page.waitForTimeout(200);
  }
  assert.equal(records.length, 1);
  const rec = records[0];
  assert.equal(validateTrajectory(rec), null);
  assert.equal(rec.finalSql, SQL);
  const meta = rec.meta as Record<string, unknown>;
  assert.deepEqual([meta.source, meta.tool, meta.step], ['vscode-lm-tool', 'quarry_run_sql', 0]);
  assert.equal(rec.groupId, meta.session);

  const item = await ed.notification(/quarry_run_sql answered/);
  await item.getByRole('button', { name: 'Open in Query Results' }).click();
  const grid = await ed.webview('Query Results', 60_000);
  await grid.locator('#results-grid tbody tr').first().waitFor({ timeout: 30_000 });
  const names = await grid.locator('#results-grid tbody tr td:first-child').allInnerTexts();
  assert.deepEqual(names, ['Olga Tokarczuk', 'Wisława Szymborska']);
  await ed.screenshot('lmtools-query-results');
});
