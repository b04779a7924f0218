// As a new user, by mouse and keyboard: the Databases view's tree down to columns (type, PK/FK), Preview Table from
// the context menu (a grid of the table's rows), Test Model Connection failing on a server that wants an API key and
// the notification's "Set API Key…" fixing it, and the model status bar item with its Switch Model picker listing the
// loopback OpenAI-compatible server's models.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

const KEY = 'k-e2e-9d2f61';
let ed: Editor;

/**
 * Waits for a notification whose text matches and returns its element. A headless browser window never has focus,
 * and VS Code holds toasts back until it does, so the notification center (bell) is opened and read instead.
 */

before(async () => {
  ed = await openEditor({
    name: 'databases',
    samples: true,
    openai: { models: ['e2e-model', 'other-model'], defaultResponse: 'OK', apiKey: KEY },
  });
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('databases', () => ed);

test('tree: database → tables with row counts → columns with type and PK/FK, by keyboard', async () => {
  const view = await ed.openActivityView('Quarry');
  const tree = view.locator('.monaco-list');
  const row = (text: string) => tree.locator('.monaco-list-row', { hasText: text }).first();
  await row('clinic.sqlite').waitFor({ timeout: 30_000 });
  await row('bookshop.sqlite').waitFor({ timeout: 30_000 });
  await row('clinic.sqlite').click();
  await ed.page.keyboard.press('ArrowRight');
  await row('appointment').waitFor({ timeout: 30_000 });
  assert.match(await row('appointment').innerText(), /7 rows/);
  await row('appointment').click();
  await ed.page.keyboard.press('ArrowRight');
  await row('doctor_id').waitFor({ timeout: 30_000 });
  assert.match(await row('appointment_id').innerText(), /INTEGER · PK/);
  assert.match(await row('doctor_id').innerText(), /FK → doctor\.doctor_id/);
  await ed.screenshot('databases-tree-columns');
});

test('Preview Table from the context menu shows the rows in a grid', async () => {
  const view = await ed.openActivityView('Quarry');
  const tree = view.locator('.monaco-list');
  const doctor = tree.locator('.monaco-list-row', { hasText: /^doctor\s*3 rows/ }).first();
  await doctor.waitFor({ timeout: 30_000 });
  await doctor.click({ button: 'right' });
  // The menu ignores a click that lands while it is still opening; hover the entry (which focuses it) and press Enter.
  const entry = ed.page.locator('.monaco-menu .action-item', { hasText: 'Preview Table' }).first();
  await entry.waitFor({ timeout: 15_000 });
  await entry.hover();
  await ed.page.keyboard.press('Enter');
  const app = await ed.webview('Ines Duarte');
  const rows = app.locator('#preview-grid tbody tr');
  assert.equal(await rows.count(), 3);
  assert.match(await app.locator('#title').innerText(), /doctor · clinic\.sqlite/);
  // Sort by name with the keyboard: Enter on the header.
  await app.locator('#preview-grid th', { hasText: 'name' }).focus();
  await ed.page.keyboard.press('Enter');
  // The sort runs in SQLite (ORDER BY through the sandbox): wait for the page it sends back.
  await app.waitForFunction(
    () => document.querySelector('#preview-grid tbody tr')?.textContent?.includes('Amara Okafor'),
    undefined,
    { timeout: 15_000 },
  );
  assert.match(await rows.first().innerText(), /Amara Okafor/);
  await ed.screenshot('databases-preview');
});

test('Copy DDL confirms; Show Schema opens a read-only document that closes without a save prompt', async () => {
  const view = await ed.openActivityView('Quarry');
  const tree = view.locator('.monaco-list');
  const clinic = tree.locator('.monaco-list-row', { hasText: 'clinic.sqlite' }).first();
  const menu = async (label: string) => {
    await clinic.click({ button: 'right' });
    const entry = ed.page.locator('.monaco-menu .action-item', { hasText: label }).first();
    await entry.waitFor({ timeout: 15_000 });
    await entry.hover();
    await ed.page.keyboard.press('Enter');
  };
  await menu('Copy DDL');
  await ed.notification(/DDL of clinic\.sqlite copied to the clipboard \(\d+ lines\)/);
  await ed.screenshot('databases-copy-ddl');
  await menu('Show Schema');
  await ed.pick('DDL');
  const tab = ed.page.locator('.tabs-container .tab', { hasText: 'clinic.sqlite schema (ddl).sql' }).first();
  await tab.waitFor({ timeout: 15_000 });
  await ed.screenshot('databases-schema');
  await ed.runCommand('View: Close Editor');
  await tab.waitFor({ state: 'detached', timeout: 15_000 });
  assert.equal(await ed.page.locator('.monaco-dialog-box').count(), 0, 'no "save changes?" dialog');
});

test('Test Model Connection says the server wants a key; "Set API Key…" on the notification fixes it', async () => {
  await ed.runCommand('Quarry: Test Model Connection');
  const failed = await ed.notification(/Authentication failed/);
  assert.match(await failed.innerText(), /401/);
  await ed.screenshot('databases-auth-failed');
  await failed.locator('.monaco-button', { hasText: 'Set API Key…' }).click();
  await ed.answer(KEY);
  await ed.notification(/API key saved for http:\/\/127\.0\.0\.1/);
  await ed.runCommand('Quarry: Test Model Connection');
  await ed.notification(/connected, openai · e2e-model, \d+ ms/);
  const chat = ed.openai!.requests.filter((r) => r.path.endsWith('/chat/completions'));
  assert.equal(chat[chat.length - 1].authorization, `Bearer ${KEY}`);
  await ed.screenshot('databases-connection-ok');
  await ed.page.keyboard.press('Escape');
});

test("the status bar names the model; clicking it lists the server's models", async () => {
  const item = ed.page.locator('.statusbar-item', { hasText: 'openai · e2e-model' }).first();
  await item.waitFor({ timeout: 30_000 });
  await item.click();
  const input = ed.page.locator('.quick-input-widget');
  await input.locator('.monaco-list-row', { hasText: 'other-model' }).first().waitFor({ timeout: 30_000 });
  // The picker starts on the model in use, so Enter keeps it.
  await input.locator('.monaco-list-row.focused', { hasText: 'e2e-model' }).first().waitFor({ timeout: 10_000 });
  const labels = await input.locator('.monaco-list-row').allInnerTexts();
  assert.ok(
    labels.some((l) => l.includes('tiny-sql')),
    labels.join(' | '),
  );
  await ed.screenshot('databases-switch-model');
  await ed.page.keyboard.press('Escape');
});
