// Ask, as a new user would, by keyboard: the packaged extension in a fresh code-server, the sample workspace, the model
// an OpenAI-compatible server on 127.0.0.1 that streams slowly enough to watch. "Quarry: Ask a Question…" from the
// palette, the database and the question typed into VS Code's pickers, the turns streaming into the Ask panel, the
// final SQL and its result grid; a follow-up typed in the panel; Stop (Escape) on a slow run; the trajectory saved;
// the conversation back after the panel was hidden; Open in Editor bound to the database, and Ask about This SQL;
// the final SQL's query plan drawn as a tree.
// Screenshots in test-artifacts/screenshots/ask-*.png.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Frame } from 'playwright-core';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

const FIRST_Q = 'Which doctor has the most appointments?';
const FIRST_EXPLORE =
  'SELECT d.name, count(*) AS n FROM appointment a JOIN doctor d ON d.doctor_id = a.doctor_id GROUP BY ' +
  'd.name ORDER BY n DESC';
const FIRST_SQL =
  'SELECT d.name, count(*) AS appointments FROM appointment a JOIN doctor d ON d.doctor_id = a.doctor_id ' +
  'GROUP BY d.name ORDER BY appointments DESC';
const FOLLOW_Q = 'What is the specialty of the first one?';
const FOLLOW_SQL = "SELECT specialty FROM doctor WHERE name = 'Ines Duarte'";
const SLOW_Q = 'Total fees per city of the patients';
const PORTO_Q = 'What is the total fee paid by patients from Porto?';
const WHY_Q = 'Why does this list every doctor instead of only the busiest?';
const PORTO_SQL =
  "SELECT sum(a.fee) AS total FROM appointment a JOIN patient p ON p.patient_id = a.patient_id WHERE p.city = 'Porto'";

let ed: Editor;
before(async () => {
  ed = await openEditor({
    name: 'ask',
    settings: { 'quarry.agent.protocol': 'skyrl', 'quarry.agent.maxTurns': 4 },
    openai: {
      // Streamed a word at a time with a pause, so the turns are seen arriving.
      chunkDelayMs: 40,
      script: [
        // Later questions first: a follow-up's prompt quotes the earlier questions, so their entries would match.
        {
          match: WHY_Q,
          response:
            '<think>It has no LIMIT, so every doctor is listed.</think>\n' +
            `<solution>${FIRST_SQL} LIMIT 1</solution>`,
        },
        {
          match: 'patients from Porto',
          response: `<think>Sum the fees of Porto's patients.</think>\n<solution>${PORTO_SQL}</solution>`,
        },
        {
          match: FOLLOW_Q,
          turn: 0,
          response: `<think>The first doctor was Ines Duarte; look up the specialty.</think>\n<sql>${FOLLOW_SQL}</sql>`,
        },
        { match: FOLLOW_Q, turn: 1, response: `<think>Cardiology.</think>\n<solution>${FOLLOW_SQL}</solution>` },
        {
          match: FIRST_Q,
          turn: 0,
          response:
            `<think>I will count the appointments of every doctor first and then look at who is on top of ` +
            `the list.</think>\n<sql>${FIRST_EXPLORE}</sql>`,
        },
        {
          match: FIRST_Q,
          turn: 1,
          response:
            `<think>Ines Duarte has three appointments, more than anyone ` +
            `else.</think>\n<solution>${FIRST_SQL}</solution>`,
        },
        { match: SLOW_Q, response: '<think>This is never answered: the test server hangs on it.</think>' },
      ],
    },
  });
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('ask', () => ed);

let panel: Frame;

/** The question's input box (the same quick-input widget the database pick used: wait for its title to change). */
async function questionBox(): Promise<void> {
  await ed.page
    .locator('.quick-input-widget .quick-input-title', { hasText: 'Quarry: Ask about data/clinic.sqlite' })
    .waitFor({ timeout: 15_000 });
}

async function shows(frame: Frame, text: string | RegExp, timeout = 30_000): Promise<void> {
  await frame.locator('body', { hasText: text }).waitFor({ timeout });
}

test(
  'Ask a Question by keyboard: pick the database, type ' + 'the question, watch the turns stream in, get the result',
  async () => {
    // The first reply pauses after a few words until the test has seen them in the panel (a fast machine would
    // otherwise finish streaming before the webview is looked at).
    const release = ed.openai!.holdNext(4);
    await ed.runCommand('Quarry: Ask a Question…');
    // The database picker lists the workspace's SQLite files; typing filters it and Enter takes the match.
    await ed.answer('clinic');
    await questionBox();
    await ed.answer(FIRST_Q);
    panel = await ed.webview('Q1.');
    // While the model streams, the turn's raw text is shown as it arrives.
    try {
      await panel.locator('.q-stream').first().waitFor({ timeout: 30_000 });
      await ed.screenshot('ask-streaming');
    } finally {
      release();
    }
    await shows(panel, 'Final SQL');
    await panel.locator('#x0-result tbody tr').first().waitFor({ timeout: 30_000 });
    const status = await panel.locator('#x0-status').innerText();
    // The card names the model that answered (the settings' label: backend · model name).
    assert.match(status, /skyrl · openai · \S+ · turns 2 \/ 4/);
    assert.match(status, /answered in/);
    // Turn 1: reasoning collapsed, the SQL highlighted, its observation as a table with the real rows.
    const turn1 = panel.locator('#x0-t0');
    assert.equal(
      await turn1.locator('details').first().getAttribute('open'),
      null,
      'reasoning is collapsed by default',
    );
    assert.ok((await turn1.locator('.q-sql .q-kw').count()) > 3, 'SQL keywords are highlighted');
    const obs = await turn1.locator('.q-obs table').innerText();
    assert.match(obs, /Ines Duarte\s+3/);
    // The final result grid: three doctors, Ines Duarte first.
    const grid = panel.locator('#x0-result');
    assert.match(await grid.innerText(), /rows 1–3 of 3/);
    const names = await grid.locator('tbody tr td:first-child').allInnerTexts();
    assert.deepEqual([names[0], [...names].sort()], ['Ines Duarte', ['Amara Okafor', 'Ines Duarte', 'Tomas Berg']]);
    await ed.screenshot('ask-answered');
  },
);

test("Plan on the answer's card draws its final SQL's query plan as a tree; Plan again hides it", async () => {
  await panel.locator('#x0-plan').click();
  const view = panel.locator('#x0-plan-view');
  await view.locator('li[data-kind="search"]').first().waitFor({ timeout: 30_000 });
  const steps = await view.locator('li').allInnerTexts();
  assert.equal(steps.length, 4, steps.join(' | '));
  assert.match(steps[0], /SCAN a/);
  assert.match(steps[0], /appointment · \d+ rows/);
  assert.match(steps[1], /primary key[\s\S]*SEARCH d USING INTEGER PRIMARY KEY/);
  assert.match(steps[2], /temp B-tree[\s\S]*USE TEMP B-TREE FOR GROUP BY/);
  assert.equal(await panel.locator('#x0-plan').getAttribute('aria-pressed'), 'true');
  await view.scrollIntoViewIfNeeded();
  await ed.screenshot('ask-plan');
  await panel.locator('#x0-plan').click();
  await view.waitFor({ state: 'detached', timeout: 15_000 });
});

test(
  'the result grid sorts the whole result in SQLite from the keyboard ' + '(Enter on the header; again reverses)',
  async () => {
    const grid = panel.locator('#x0-result');
    const header = grid.locator('thead tr').first().locator('th', { hasText: 'name' });
    const names = () => grid.locator('tbody tr td:first-child').allInnerTexts();
    /** Waits for the page the host sends after a sort (the grid asks SQLite, then draws). */
    async function sortedAs(dir: string, expected: string[]): Promise<void> {
      await grid.locator(`thead th[aria-sort="${dir}"]`).waitFor({ timeout: 30_000 });
      for (let i = 0; i < 100 && JSON.stringify(await names()) !== JSON.stringify(expected); i++)
        await ed.page.waitForTimeout(100);
      assert.deepEqual(await names(), expected);
    }
    await header.focus();
    await ed.page.keyboard.press('Enter');
    await sortedAs('ascending', ['Amara Okafor', 'Ines Duarte', 'Tomas Berg']);
    await ed.page.keyboard.press('Enter');
    await sortedAs('descending', ['Tomas Berg', 'Ines Duarte', 'Amara Okafor']);
    await ed.screenshot('ask-sorted');
  },
);

test(
  'Export CSV… writes the whole result, as sorted in SQLite, through the save dialog (keyboard: Enter on the button, ' +
    'Enter in the dialog)',
  async () => {
    const exportButton = panel.locator('#x0-result vscode-button', { hasText: 'Export CSV…' });
    await exportButton.focus();
    await ed.page.keyboard.press('Enter');
    await ed.saveDialogProposes('quarry-result-1.csv');
    await ed.screenshot('ask-export-dialog');
    await ed.page.keyboard.press('Enter');
    await shows(panel, /exported 3 rows to quarry-result-1\.csv/);
    const csv = readFileSync(join(ed.workspace, 'quarry-result-1.csv'), 'utf8');
    assert.equal(csv.split('\r\n')[0], 'name,appointments');
    // In the order the grid shows (sorted by name, descending, in the test before), not the query's.
    assert.deepEqual(csv.split('\r\n').slice(1, 4), ['Tomas Berg,2', 'Ines Duarte,3', 'Amara Okafor,2']);
    assert.equal(csv.trimEnd().split('\r\n').length, 4, 'header and three rows');
  },
);

test('Open in Editor puts the final SQL in a new .sql editor beside the panel', async () => {
  await panel.locator('#x0-openSql').focus();
  await ed.page.keyboard.press('Enter');
  const editor = ed.page.locator('.editor-instance .monaco-editor .view-lines').first();
  await ed.page.locator('.tabs-container .tab', { hasText: 'Untitled' }).first().waitFor({ timeout: 15_000 });
  const text = (await editor.innerText()).replace(/\u00a0/g, ' ');
  assert.ok(text.includes('ORDER BY appointments DESC'), text);
  await ed.screenshot('ask-open-in-editor');
  panel = await ed.webview('Q1.');
});

test('a follow-up (Ctrl+Enter) keeps skyrl; its prompt carries the first question, SQL and result', async () => {
  const before = ed.openai!.requests.length;
  await panel.locator('#question textarea').focus();
  await ed.page.keyboard.type(FOLLOW_Q);
  await ed.page.keyboard.press('Control+Enter');
  await shows(panel, 'Q2.');
  await panel.locator('#x1-result tbody tr').first().waitFor({ timeout: 30_000 });
  assert.match(await panel.locator('#x1-status').innerText(), /skyrl · openai · \S+ · turns 2 \/ 4/);
  assert.match(await panel.locator('#x1-result').innerText(), /cardiology/);
  // What went over the socket to the stand-in server: skyrl's prompt with Quarry's conversation block in its
  // External Knowledge section, the first question with its final SQL and the result the panel showed.
  const sent = ed.openai!.requests.slice(before).flatMap((r) => {
    const messages = (r.body?.messages ?? []) as { role: string; content: string }[];
    return messages.filter((m) => m.role === 'user').map((m) => m.content);
  });
  const memory = [
    'External Knowledge:',
    'Earlier in this conversation:',
    `1. Question: ${FIRST_Q}`,
    `   Final SQL: ${FIRST_SQL}`,
    "   Result: [('Ines Duarte', 3), ",
  ].join('\n');
  assert.ok(sent[0]?.includes(memory), sent[0]);
  assert.ok(!sent[0]?.includes('memory_retrieve'), 'not the MTSQL-R1 prompt');
  await ed.screenshot('ask-follow-up');
});

test(
  'every question is already in the workspace store; ' + 'Save Trajectory says where without writing it twice',
  async () => {
    const store = join(ed.workspace, '.quarry', 'trajectories', 'asked.jsonl');
    assert.ok(existsSync(store));
    const read = () =>
      readFileSync(store, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { task: { question: string }; finalSql: string; end: string });
    assert.deepEqual(
      read().map((r) => [r.task.question, r.end]),
      [
        [FIRST_Q, 'answer'],
        [FOLLOW_Q, 'answer'],
      ],
    );
    await panel.locator('#x0-saved').waitFor({ timeout: 15_000 });
    await panel.locator('#x0-saveTrajectory').click();
    assert.deepEqual(
      read()
        .map((r) => [r.task.question, r.end, r.finalSql])
        .slice(0, 1),
      [[FIRST_Q, 'answer', FIRST_SQL]],
    );
    assert.equal(read().length, 2, 'saved once');
  },
);

test('Stop (Escape) cancels a slow run; the turns so far stay and the stop is said', async () => {
  ed.openai!.hangNext(1);
  await panel.locator('#question textarea').focus();
  await ed.page.keyboard.type(SLOW_Q);
  await ed.page.keyboard.press('Control+Enter');
  await shows(panel, 'Q3.');
  await shows(panel, 'working…');
  await ed.screenshot('ask-slow-running');
  await ed.page.keyboard.press('Escape');
  await panel.locator('#x2-status', { hasText: 'stopped' }).waitFor({ timeout: 15_000 });
  // Saved on its own (the default): the card says where its turns are, not to save them; no turn finished.
  await shows(panel, 'Stopped. The turns that finished are in its saved trajectory.');
  const card = await panel.locator('#x2').innerText();
  assert.doesNotMatch(card, /save the trajectory to keep them/);
  assert.match(await panel.locator('#x2-status').innerText(), /turns 0 \/ 4/);
  const chat = ed.openai!.requests.filter((r) => r.body !== null);
  assert.equal(chat[chat.length - 1].clientClosed, true, 'the model request was aborted');
  await ed.screenshot('ask-stopped');
});

test('the conversation survives the panel being hidden and shown again', async () => {
  // A new untitled editor in the panel's group hides the panel (its webview is thrown away: no retainContext).
  await ed.runCommand('File: New Untitled Text File');
  await ed.page.waitForTimeout(500);
  await ed.runCommand('View: Open Previous Editor');
  panel = await ed.webview('Q3.');
  for (const text of [FIRST_Q, FOLLOW_Q, SLOW_Q, 'cardiology', 'Trajectory saved to']) await shows(panel, text, 15_000);
  await ed.screenshot('ask-restored');
});

test(
  'Ask Quarry about the Selection: ' + 'the selected line becomes the question (editable), asked in the same panel',
  async () => {
    await ed.page.locator('.part.sidebar .monaco-list-row', { hasText: 'questions.md' }).first().click();
    await ed.page.locator('.tabs-container .tab', { hasText: 'questions.md' }).first().waitFor({ timeout: 15_000 });
    const editor = ed.page.locator('.editor-instance .monaco-editor', { hasText: 'Questions to try' }).first();
    await editor.click();
    // Line 4 is "- clinic: What is the total fee paid by patients from Porto?" (wrapped in this narrow editor, so the
    // whole logical line is selected with Expand Line Selection rather than Home/End).
    await ed.runCommand('Go to Line/Column...');
    await ed.answer(':4');
    await ed.runCommand('Expand Line Selection');
    // The editor's context menu (right-click on the selection) offers it while text is selected.
    await editor.locator('.view-line', { hasText: 'Porto' }).first().click({ button: 'right' });
    const item = ed.page.locator('.monaco-menu .action-item', { hasText: 'Ask Quarry about the Selection' }).first();
    await item.waitFor({ state: 'visible', timeout: 15_000 });
    await ed.screenshot('ask-selection-menu');
    await item.click();
    await ed.answer('clinic');
    await questionBox();
    const box = ed.page.locator('.quick-input-widget .quick-input-box input');
    assert.equal(await box.inputValue(), `- clinic: ${PORTO_Q}`, 'the selection is the question, ready to edit');
    await ed.page.keyboard.press('Enter');
    panel = await ed.webview('Q4.');
    await panel.locator('#x3-result tbody tr').first().waitFor({ timeout: 30_000 });
    assert.match(await panel.locator('#x3-result').innerText(), /total\s+200(\.0)?/);
    await ed.screenshot('ask-selection');
  },
);

test('another database keeps the conversation: Conversations lists it, its button brings it back', async () => {
  await panel.locator('#change-db').click();
  await ed.answer('orchard');
  await shows(panel, 'Conversations (1 more)');
  assert.equal(await panel.locator('.q-exchange').count(), 0, 'a new, empty conversation about orchard');
  await panel.locator('summary', { hasText: 'Conversations' }).click();
  const kept = panel.locator('#conversation-0');
  assert.match(
    await kept.innerText(),
    /data\/clinic\.sqlite · 4 questions · “Which doctor has the most appointments\?”/,
  );
  await ed.screenshot('ask-conversations');
  await kept.click();
  await shows(panel, 'Q4.');
  assert.equal(await panel.locator('.q-exchange').count(), 4);
  assert.match(await panel.locator('#x1-status').innerText(), /skyrl/);
  // The brought-back result runs its page again in SQLite: wait for the rows rather than reading "loading…".
  await panel.locator('#x1-result', { hasText: 'cardiology' }).waitFor({ timeout: 30_000 });
  await ed.screenshot('ask-conversation-back');
});

test(
  'Open in Editor gives a SQL document bound to the database; ' + 'Ask about This SQL sends it with a question',
  async () => {
    await panel.locator('#x0-openSql').click();
    // Bound at once: the SQL document's status bar item names the answer's database, so Ctrl+Enter runs it.
    await ed.page.locator('.statusbar-item', { hasText: 'clinic.sqlite' }).first().waitFor({ timeout: 15_000 });
    const sent = ed.openai!.requests.length;
    await ed.runCommand('Quarry: Ask about This SQL…');
    await ed.answer(WHY_Q);
    panel = await ed.webview('Q5.', 60_000);
    await panel.locator('#x4-status', { hasText: 'answered' }).waitFor({ timeout: 60_000 });
    // The card's title is the question alone; the SQL shows apart, as code.
    assert.equal((await panel.locator('#x4 .q-question').innerText()).trim(), WHY_Q);
    assert.match(await panel.locator('#x4-asked-sql').innerText(), /SELECT/i);
    const prompt = ed
      .openai!.requests.slice(sent)
      .map((r) => JSON.stringify(r.body?.messages ?? ''))
      .find((m) => m.includes(WHY_Q));
    assert.ok(prompt, 'the question reached the model');
    assert.ok(prompt.includes('The SQL in question:'), 'with the SQL as context');
    assert.ok(
      prompt.includes(FIRST_SQL.replace(/'/g, '\\u0027').slice(0, 60)) || prompt.includes(FIRST_SQL.slice(0, 60)),
    );
    // The grid asks the host for its first page once it is drawn ("loading…" until then).
    await panel.locator('#x4-result', { hasText: /rows 1–1 of 1/ }).waitFor({ timeout: 30_000 });
    await ed.screenshot('ask-about-sql');
  },
);
