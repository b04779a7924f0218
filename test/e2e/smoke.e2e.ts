// As a new user: the packaged extension installed into a fresh code-server, a workspace it has not seen. The
// workbench loads, the Quarry activity-bar view lists the workspace's SQLite databases (and not a text file named
// *.db), "Quarry: Show Log" opens the extension's output channel, and with the harness's loopback OpenAI-compatible
// server configured, "Quarry: Test Model Connection" reaches that server over its socket.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

let ed: Editor;
before(async () => {
  ed = await openEditor({ name: 'smoke', openai: { models: ['smoke-model'], defaultResponse: 'OK' } });
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('smoke', () => ed);

test('the workbench loads with the workspace open and Quarry in the activity bar', async () => {
  const explorer = ed.page.locator('.part.sidebar');
  await explorer.locator('.monaco-list-row', { hasText: 'data' }).first().waitFor({ timeout: 30_000 });
  await ed.page.locator('.part.activitybar [aria-label^="Quarry"]').first().waitFor({ timeout: 30_000 });
  await ed.screenshot('smoke-workbench');
});

test('the Quarry view lists the workspace databases', async () => {
  const view = await ed.openActivityView('Quarry');
  const tree = view.locator('.monaco-list');
  for (const db of ['clinic.sqlite', 'orchard.sqlite', 'weather.sqlite']) {
    await tree.locator('.monaco-list-row', { hasText: db }).first().waitFor({ timeout: 30_000 });
  }
  const rows = await tree.locator('.monaco-list-row').allInnerTexts();
  assert.ok(!rows.some((t) => t.includes('not-a-database')), `a text file named .db is listed: ${rows.join(' | ')}`);
  // By keyboard: select the clinic database and open it with the right arrow to see its tables.
  await tree.locator('.monaco-list-row', { hasText: 'clinic.sqlite' }).first().click();
  await ed.page.keyboard.press('ArrowRight');
  // Each table shows its row count (data/clinic.sql: 3 doctors, 5 patients, 7 appointments).
  for (const [table, rowsInTable] of [
    ['doctor', 3],
    ['patient', 5],
    ['appointment', 7],
  ] as const) {
    // Counts arrive after the names (they are read through the sandbox): wait for the row to show its count.
    const counted = tree.locator('.monaco-list-row', { hasText: new RegExp(`${table}\\D*${rowsInTable}(?!\\d)`) });
    const shown = await counted
      .first()
      .waitFor({ timeout: 30_000 })
      .then(
        () => true,
        () => false,
      );
    const text = await tree
      .locator('.monaco-list-row', { hasText: table })
      .first()
      .innerText()
      .catch(() => '(no row)');
    assert.ok(shown, `${table} should show ${rowsInTable} rows; the row says ${JSON.stringify(text)}`);
  }
  await ed.screenshot('smoke-databases-view');
});

test('"Quarry: Show Log" opens the Quarry output channel', async () => {
  await ed.runCommand('Quarry: Show Log');
  const panel = ed.page.locator('.part.panel');
  await panel.waitFor({ state: 'visible', timeout: 15_000 });
  // The Output view names the channel it shows in its channel picker.
  const picker = panel.locator('.monaco-select-box, select').first();
  await picker.waitFor({ state: 'visible', timeout: 15_000 });
  await ed.page.waitForFunction(
    () => {
      const el = document.querySelector(
        '.part.panel .monaco-select-box, .part.panel select',
      ) as HTMLSelectElement | null;
      return (
        !!el && (el.value === 'Quarry' || el.title === 'Quarry' || (el.selectedOptions?.[0]?.text ?? '') === 'Quarry')
      );
    },
    undefined,
    { timeout: 15_000 },
  );
  await ed.screenshot('smoke-show-log');
});

test('"Quarry: Test Model Connection" reaches the loopback OpenAI-compatible server', async () => {
  const settings = JSON.parse(readFileSync(join(ed.workspace, '.vscode', 'settings.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  assert.equal(settings['quarry.model.backend'], 'openai');
  assert.equal(settings['quarry.model.baseUrl'], ed.openai!.url);
  assert.equal(settings['quarry.model.name'], 'smoke-model');
  const before = ed.openai!.requests.length;
  await ed.runCommand('Quarry: Test Model Connection');
  const deadline = Date.now() + 30_000;
  while (ed.openai!.requests.length === before && Date.now() < deadline) await ed.page.waitForTimeout(250);
  const reqs = ed.openai!.requests.slice(before);
  assert.ok(reqs.length > 0, 'the test server got no request');
  assert.ok(
    reqs.every((r) => r.path.startsWith('/v1/')),
    reqs.map((r) => r.path).join(', '),
  );
  await ed.screenshot('smoke-test-connection');
});
