// Trajectory replay as a new user would use it, by keyboard and mouse: the packaged extension in a fresh code-server,
// a trajectory file in the workspace made of real agent-loop runs (scripted model, the workspace's clinic database,
// GRPO groups of several samples). "Quarry: Open Trajectory Replay…" from the palette, the file picked in the quick
// pick; the list filtered; turns stepped with n/p; two trajectories compared; a question's group in columns; the
// panel hidden and shown again; a drill-down from Diagnostics scrolls its row into view; the detail pane read at
// 1280×800. Screenshots in test-artifacts/screenshots/replay-*.png.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Frame } from 'playwright-core';
import { openEditor, screenshotAfterEach, type Editor } from './harness';
import { runEpisode } from '../../src/core/agent/loop';
import { createSqlPool } from '../../src/core/db';
import type { ChatModel } from '../../src/core/models/types';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import { scriptedModel } from '../support/scriptedModel';

const Q_TOP = 'Which doctor has the most appointments?';
const GOLD_TOP =
  'SELECT T2.name FROM appointment AS T1 JOIN doctor AS T2 ON T1.doctor_id = T2.doctor_id GROUP BY ' +
  'T2.name ORDER BY count(*) DESC LIMIT 1';
const Q_KIDS = 'How many patients were born after 2010?';
const GOLD_KIDS = 'SELECT count(*) FROM patient WHERE born > 2010';
const Q_FEES = 'What is the total fee of all appointments in March 2024?';
const GOLD_FEES = "SELECT sum(fee) FROM appointment WHERE day LIKE '2024-03-%'";

const scripted = (replies: string[]): ChatModel =>
  scriptedModel(replies, 'openai:http://127.0.0.1:8000/v1#qwen2.5-coder-7b', {
    usage: (_req, _text, n) => ({ promptTokens: 420 + 60 * n, completionTokens: 38 }),
  });

const think = (t: string) => `<think>${t}</think>\n`;

/**
 * Four samples of one question (two right, one wrong, one that recovers from an error), two of another, three of a
 * third.
 */
async function fixture(workspace: string): Promise<{ file: string; records: TrajectoryRecord[] }> {
  const db = join(workspace, 'data', 'clinic.sqlite');
  const pool = createSqlPool({ size: 2 });
  try {
    const run = (
      id: string,
      groupId: string,
      sample: number,
      question: string,
      gold: string,
      replies: string[],
      meta: Record<string, unknown> = {},
    ) =>
      runEpisode({
        id,
        groupId,
        sample,
        protocolName: 'skyrl',
        config: { maxTurns: 4 },
        pool,
        model: scripted(replies),
        meta,
        task: { id: groupId, question, dbPath: db, gold },
      });
    const records = [
      await run(
        'top-0',
        'top',
        0,
        Q_TOP,
        GOLD_TOP,
        [
          `${think('Count the appointments per doctor first.')}<sql>SELECT doctor_id, count(*) AS n FROM ` +
            `appointment GROUP BY doctor_id ORDER BY n DESC</sql>`,
          `${think('Doctor 1 has three; join for the name.')}<solution>SELECT d.name FROM appointment a ` +
            `JOIN doctor d ON d.doctor_id = a.doctor_id GROUP BY d.name ORDER BY count(*) DESC LIMIT ` +
            `1</solution>`,
        ],
        { label: 'good' },
      ),
      await run(
        'top-1',
        'top',
        1,
        Q_TOP,
        GOLD_TOP,
        [
          `${think('The last doctor, probably.')}<solution>SELECT name FROM doctor ORDER BY doctor_id ` +
            `DESC LIMIT 1</solution>`,
        ],
        { label: 'overconfidence' },
      ),
      await run('top-2', 'top', 2, Q_TOP, GOLD_TOP, [
        `${think('Look at the doctors.')}<sql>SELECT nme FROM doctor</sql>`,
        `${think('Typo. Columns are doctor_id, name, specialty.')}<sql>SELECT doctor_id, name FROM doctor</sql>`,
        `${think('Now count.')}<solution>SELECT d.name FROM doctor d JOIN appointment a ON a.doctor_id = ` +
          `d.doctor_id GROUP BY d.doctor_id ORDER BY count(*) DESC LIMIT 1</solution>`,
      ]),
      await run('top-3', 'top', 3, Q_TOP, GOLD_TOP, [
        `${think('Fees might tell.')}<sql>SELECT doctor_id, sum(fee) FROM appointment GROUP BY doctor_id</sql>`,
        `${think('Take the smallest fee total.')}<solution>SELECT d.name FROM appointment a JOIN doctor d ` +
          `ON d.doctor_id = a.doctor_id GROUP BY d.name ORDER BY sum(fee) ASC LIMIT 1</solution>`,
      ]),
      await run('kids-0', 'kids', 0, Q_KIDS, GOLD_KIDS, [
        `${think('Filter on born.')}<solution>SELECT count(*) FROM patient WHERE born > 2010</solution>`,
      ]),
      await run('kids-1', 'kids', 1, Q_KIDS, GOLD_KIDS, [
        `${think('Filter on born.')}<solution>SELECT COUNT(patient_id) FROM patient WHERE born >= 2011</solution>`,
      ]),
      await run('fees-0', 'fees', 0, Q_FEES, GOLD_FEES, [
        `${think('Sum March fees.')}<solution>SELECT sum(fee) FROM appointment WHERE day BETWEEN ` +
          `'2024-03-01' AND '2024-03-31'</solution>`,
      ]),
      await run(
        'fees-1',
        'fees',
        1,
        Q_FEES,
        GOLD_FEES,
        [`${think('All fees.')}<solution>SELECT sum(fee) FROM appointment</solution>`],
        { label: 'value mismatch' },
      ),
      await run('fees-2', 'fees', 2, Q_FEES, GOLD_FEES, [
        `${think('Which days are there?')}<sql>SELECT DISTINCT day FROM appointment</sql>`,
        `${think('March only.')}<solution>SELECT sum(fee) FROM appointment WHERE day LIKE '2024-03%'</solution>`,
      ]),
    ];
    const dir = join(workspace, 'runs');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'replay-e2e.jsonl');
    writeFileSync(file, records.map((r) => JSON.stringify(r) + '\n').join(''));
    return { file, records };
  } finally {
    await pool.close();
  }
}

let ed: Editor;
let records: TrajectoryRecord[];
before(async () => {
  ed = await openEditor({ name: 'replay' });
  ({ records } = await fixture(ed.workspace));
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('replay', () => ed);

let panel: Frame;

async function rowCount(): Promise<number> {
  return panel.locator('.r-row').count();
}

async function waitCounts(re: RegExp): Promise<void> {
  await panel.locator('#r-counts', { hasText: re }).waitFor({ timeout: 30_000 });
}

test('Open Trajectory Replay from the palette, pick the file: every trajectory listed and scored', async () => {
  // Quarry's own folder is never offered, though it holds JSONL files.
  mkdirSync(join(ed.workspace, '.quarry', 'exports'), { recursive: true });
  writeFileSync(join(ed.workspace, '.quarry', 'exports', 'sft-export.jsonl'), '{}\n');
  await ed.runCommand('Quarry: Open Trajectory Replay…');
  const picker = ed.page.locator('.quick-input-widget .quick-input-list');
  await picker.locator('.monaco-list-row', { hasText: 'replay-e2e.jsonl' }).first().waitFor({ timeout: 15_000 });
  const offered = await picker.locator('.monaco-list-row').allInnerTexts();
  assert.ok(!offered.some((t) => t.includes('.quarry/exports')), offered.join(' | '));
  await ed.answer('replay-e2e');
  panel = await ed.webview('Replay: replay-e2e.jsonl');
  await waitCounts(new RegExp(`^${records.length} of ${records.length} trajectories`));
  assert.equal(await rowCount(), records.length, 'a short list renders every row');
  // Empty range filters read "any", not a number that looks typed in; the file's range is the tooltip.
  for (const id of ['f-turns-min', 'f-turns-max', 'f-reward-min', 'f-reward-max']) {
    const field = panel.locator(`#${id}`);
    assert.deepEqual(
      [await field.getAttribute('placeholder'), await field.evaluate((e) => (e as HTMLInputElement).value)],
      ['any', ''],
    );
  }
  assert.match((await panel.locator('#f-turns-min').getAttribute('title')) ?? '', /^turns in this file: 1–3$/);
  // Scoring runs by itself on a small file; the verdict column fills in.
  await panel
    .locator('#r-score-status', { hasText: `${records.length}/${records.length} scored` })
    .waitFor({ timeout: 60_000 });
  const marks = await panel.locator('.r-row > span:nth-child(2)').allInnerTexts();
  assert.deepEqual(marks, ['✓', '✗', '✓', '✗', '✓', '✓', '✓', '✗', '✓']);
  await ed.screenshot('replay-list');
});

test('filters: verdict with the mouse, text search from the keyboard, Clear', async () => {
  await panel.locator('#f-verdict').click();
  await panel.locator('#f-verdict vscode-option', { hasText: 'Incorrect' }).click();
  await waitCounts(/^3 of 9/);
  assert.deepEqual(await panel.locator('.r-row').evaluateAll((rs) => rs.map((r) => r.getAttribute('title'))), [
    Q_TOP,
    Q_TOP,
    Q_FEES,
  ]);
  await ed.screenshot('replay-filter-incorrect');
  await panel.locator('#f-clear').click();
  await waitCounts(/^9 of 9/);
  // "/" jumps to the search field; the search sees every turn's SQL (the typo "nme" is only in an exploratory turn).
  await panel.locator('#r-list').focus();
  await ed.page.keyboard.press('/');
  await ed.page.keyboard.type('nme');
  await waitCounts(/^1 of 9/);
  await ed.page.keyboard.press('Escape');
  await ed.screenshot('replay-search');
  await panel.locator('#f-clear').click();
  await waitCounts(/^9 of 9/);
});

test('keyboard: j/k move in the list, Enter opens, n/p step the turns, ? shows the shortcuts', async () => {
  await panel.locator('#r-list').focus();
  await ed.page.keyboard.press('Home'); // top-0
  await ed.page.keyboard.press('j');
  await ed.page.keyboard.press('j'); // top-2, the one that recovers from an error
  await ed.page.keyboard.press('Enter');
  await panel.locator('#r-detail', { hasText: 'top-2' }).waitFor({ timeout: 15_000 });
  await panel.locator('#r-reward table').waitFor({ timeout: 30_000 });
  assert.match(await panel.locator('#r-reward').innerText(), /result matches the gold/);
  const current = () => panel.locator('.r-turn.r-current').getAttribute('data-turn');
  assert.equal(await current(), '0');
  const counter = () => panel.locator('#r-turn-counter').innerText();
  assert.equal(await counter(), 'Turn 1 of 3');
  assert.match(await panel.locator('.r-turn[data-turn="0"]').innerText(), /no such column: nme/);
  await ed.page.keyboard.press('n');
  assert.equal(await current(), '1');
  assert.equal(await counter(), 'Turn 2 of 3', 'the counter follows the stepping');
  await ed.page.keyboard.press('ArrowRight');
  assert.equal(await current(), '2');
  await ed.page.keyboard.press('n'); // stays on the last turn
  assert.equal(await current(), '2');
  await ed.screenshot('replay-detail-last-turn');
  await ed.page.keyboard.press('p');
  assert.equal(await current(), '1');
  assert.equal(await counter(), 'Turn 2 of 3');
  await ed.page.keyboard.press('k');
  await panel.locator('#r-detail', { hasText: 'top-1' }).waitFor({ timeout: 15_000 });
  await ed.page.keyboard.press('?');
  await panel.locator('#r-help').waitFor({ state: 'visible' });
  assert.match(await panel.locator('#r-help').innerText(), /next turn/);
  await ed.screenshot('replay-shortcuts');
  await ed.page.keyboard.press('Escape');
  await panel.locator('#r-help').waitFor({ state: 'hidden' });
});

test('compare: mark two with x, press c — turns side by side, final SQL differences highlighted', async () => {
  await panel.locator('#r-list').focus();
  await ed.page.keyboard.press('Home'); // top-0
  await ed.page.keyboard.press('x');
  await ed.page.keyboard.press('j'); // top-1
  await ed.page.keyboard.press('x');
  await ed.page.keyboard.press('c');
  const view = panel.locator('#r-compare-view');
  await view.waitFor({ timeout: 15_000 });
  assert.ok((await view.locator('.r-del').count()) > 0, 'removed parts marked');
  assert.ok((await view.locator('.r-add').count()) > 0, 'added parts marked');
  assert.match(await view.innerText(), /Turn 2/);
  await ed.screenshot('replay-compare');
});

test(
  'group view (g): the four samples of the question ' + 'in columns with rewards, advantages and statistics',
  async () => {
    await ed.page.keyboard.press('g');
    const stats = panel.locator('#r-group-stats');
    await stats.waitFor({ timeout: 30_000 });
    const text = await stats.innerText();
    assert.match(text, /Group top/);
    assert.match(text, /4 samples/);
    assert.match(text, /2\/4 correct/);
    const columns = panel.locator('#r-group-view > .r-cell[data-key]');
    assert.equal(await columns.count(), 4);
    assert.match(await panel.locator('#r-group-view').innerText(), /advantage -?\d/);
    await ed.screenshot('replay-group');
    // n steps the highlighted turn across all columns.
    await ed.page.keyboard.press('n');
    assert.ok((await panel.locator('#r-group-view .r-current[data-turn="1"]').count()) >= 3);
  },
);

test(
  '10,000 trajectories: the list stays virtual (only ' + 'visible rows in the DOM), End and the filters still answer',
  async () => {
    // Copies of the fixture's records under new ids, in groups of eight: a rollout file's size, not its content.
    const big = join(ed.workspace, 'runs', 'replay-10k.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      const r = records[i % records.length];
      lines.push(JSON.stringify({ ...r, id: `big-${i}`, groupId: `g${Math.floor(i / 8)}`, sample: i % 8 }));
    }
    writeFileSync(big, lines.join('\n') + '\n');
    const t0 = Date.now();
    await ed.runCommand('Quarry: Open Trajectory Replay…');
    await ed.answer('replay-10k');
    panel = await ed.webview('Replay: replay-10k.jsonl');
    await waitCounts(/^10,000 of 10,000 trajectories/);
    console.log(
      `# 10,000 trajectories listed ${Date.now() - t0} ms after the quick pick (palette, read, summarise, render)`,
    );
    const rendered = await rowCount();
    assert.ok(rendered > 5 && rendered < 80, `${rendered} rows in the DOM for 10,000 trajectories`);
    await panel.locator('#r-list').focus();
    await ed.page.keyboard.press('End');
    await panel.locator('.r-row.r-cursor', { hasText: Q_TOP }).waitFor({ timeout: 15_000 });
    assert.equal(await panel.locator('.r-row.r-cursor').getAttribute('data-key'), '9999');
    assert.ok((await rowCount()) < 80);
    await panel.locator('#r-detail', { hasText: 'big-9999' }).waitFor({ timeout: 15_000 });
    await ed.screenshot('replay-10k-end');
    await ed.page.keyboard.press('/');
    await ed.page.keyboard.type('born');
    await waitCounts(/^2,222 of 10,000/);
    await ed.page.keyboard.press('Escape');
    await ed.screenshot('replay-10k-search');
    // Not scored on open (a large file waits to be asked); "Score all" is offered.
    assert.match(await panel.locator('#r-score').innerText(), /Score all/);
  },
);

test('state survives the panel being hidden and shown again', async () => {
  await ed.runCommand('File: New Untitled Text File');
  await ed.page.waitForTimeout(500);
  await ed.runCommand('View: Open Previous Editor');
  panel = await ed.webview('Replay: replay-10k.jsonl');
  // The filter typed before hiding, the selected trajectory and its place in the list come back.
  await waitCounts(/^2,222 of 10,000/);
  assert.equal(await panel.locator('#f-search').evaluate((el) => (el as HTMLInputElement).value), 'born');
  await panel.locator('#r-detail', { hasText: 'big-9999' }).waitFor({ timeout: 15_000 });
  assert.equal((await rowCount()) < 80, true);
  await ed.screenshot('replay-restored');
});

test(
  'a drill-down from Diagnostics (Shift+Enter on the last row) ' + 'opens Replay with that row scrolled into view',
  async () => {
    // 400 trajectories (copies of the fixture's, each its own id), so the list scrolls.
    const file = join(ed.workspace, 'runs', 'replay-400.jsonl');
    const lines: string[] = [];
    for (let k = 0; lines.length < 400; k++)
      for (const r of records) if (lines.length < 400) lines.push(JSON.stringify({ ...r, id: `d${k}-${r.id}` }));
    writeFileSync(file, lines.join('\n') + '\n');
    // The copies of the file's last lines: Diagnostics lists lowest reward first, Replay in file order, so the last
    // row of Diagnostics' whole list can be near the top of Replay's; the last row of these is at the file's end.
    const lastK = /"id":"d(\d+)-/.exec(lines[lines.length - 1])![1];
    const tail = lines.filter((l) => l.includes(`"id":"d${lastK}-`)).length;
    await ed.runCommand('Quarry: Open Reward Diagnostics…');
    await ed.pick(/replay-400\.jsonl/);
    const diagnostics = await ed.webview('400 records', 180_000);
    await diagnostics.locator('#trajectory-count', { hasText: '400 of 400' }).waitFor({ timeout: 120_000 });
    // The file's own protocol's panel (skyrl) is the one it settles on; typing before that would be typed into a list
    // drawn again under the keys.
    await diagnostics
      .locator('section', { hasText: /400 scored with\s+skyrl/ })
      .first()
      .waitFor({ timeout: 120_000 });
    // By keyboard: f to the filter, the id prefix typed, Tab to the list, End to its last row.
    await diagnostics.locator('body').press('f');
    await ed.page.keyboard.type(`d${lastK}-`);
    await diagnostics.locator('#trajectory-count', { hasText: `${tail} of 400` }).waitFor({ timeout: 15_000 });
    await ed.page.keyboard.press('Tab');
    await ed.page.keyboard.press('End');
    const lastRow = diagnostics.locator(`#row-${tail - 1}`);
    await lastRow.waitFor({ timeout: 15_000 });
    assert.equal(
      await diagnostics.locator('#trajectory-list').getAttribute('aria-activedescendant'),
      `row-${tail - 1}`,
    );
    const id = await lastRow.getAttribute('data-id');
    assert.ok(id, 'the last row names its trajectory');
    const line = lines.findIndex((l) => l.includes(`"id":"${id}"`));
    // Far past the rows Replay shows without scrolling (about 30 at this window size).
    assert.ok(line >= lines.length - tail, `the chosen trajectory is one of the file's last lines (line ${line + 1})`);
    await ed.page.keyboard.press('Shift+Enter');
    panel = await ed.webview('Replay: replay-400.jsonl', 60_000);
    await panel.locator('#r-detail', { hasText: id }).waitFor({ timeout: 30_000 });
    // The search typed for replay-10k.jsonl ("born") stays with that file: this one opens unfiltered.
    await waitCounts(/^400 of 400 trajectories/);
    const cursor = panel.locator('.r-row.r-cursor');
    await cursor.waitFor({ timeout: 15_000 });
    assert.equal(await cursor.getAttribute('data-key'), String(line));
    const inView = await panel.locator('#r-list').evaluate((list) => {
      const row = list.querySelector('.r-row.r-cursor')!.getBoundingClientRect();
      const box = list.getBoundingClientRect();
      return { row: [row.top, row.bottom], box: [box.top, box.bottom], scrollTop: list.scrollTop };
    });
    assert.ok(
      inView.row[0] >= inView.box[0] - 1 && inView.row[1] <= inView.box[1] + 1 && inView.scrollTop > 0,
      `the chosen row is inside the list's view: ${JSON.stringify(inView)}`,
    );
    await ed.screenshot('replay-drill-down');
  },
);

test('the detail pane is readable at 1280×800: nothing wider than the pane, no text cut off', async () => {
  await ed.page.setViewportSize({ width: 1280, height: 800 });
  await ed.page.waitForFunction(() => window.innerWidth === 1280 && window.innerHeight === 800);
  // The workbench lays itself out again after the resize; a quick pick opened meanwhile can lose the focus and close
  // (seen once in four runs here): the harness opens it again then.
  await ed.runCommand('Quarry: Open Trajectory Replay…');
  await ed.answer('replay-e2e');
  panel = await ed.webview('Replay: replay-e2e.jsonl');
  await waitCounts(/^9 of 9/);
  await panel.locator('#r-list').focus();
  await ed.page.keyboard.press('Home');
  await ed.page.keyboard.press('j');
  await ed.page.keyboard.press('j'); // top-2: an error, then a recovery, then the answer
  await ed.page.keyboard.press('Enter');
  await panel.locator('#r-detail', { hasText: 'top-2' }).waitFor({ timeout: 15_000 });
  await panel.locator('#r-reward table').waitFor({ timeout: 30_000 });
  // Every folded part open, as someone reading it would have them.
  await panel.locator('#r-side details').evaluateAll((ds) => ds.forEach((d) => d.setAttribute('open', '')));
  const report = await panel.locator('#r-side').evaluate((side) => {
    const pane = side.getBoundingClientRect();
    const problems: string[] = [];
    const name = (el: Element) =>
      el.tagName.toLowerCase() +
      (el.id ? `#${el.id}` : '') +
      (el.className ? `.${String(el.className).split(' ')[0]}` : '');
    for (const el of Array.from(side.querySelectorAll('*'))) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (r.right > pane.right + 1 || r.left < pane.left - 1)
        problems.push(`${name(el)} reaches ${Math.round(r.left)}–${Math.round(r.right)} of ${Math.round(pane.right)}`);
      const style = getComputedStyle(el);
      if (el.scrollWidth > el.clientWidth + 1 && style.overflowX !== 'visible' && el.clientWidth > 0)
        problems.push(`${name(el)} cuts or scrolls ${el.scrollWidth - el.clientWidth}px of text sideways`);
    }
    return {
      paneWidth: Math.round(pane.width),
      windowWidth: document.documentElement.clientWidth,
      sideways: side.scrollWidth - side.clientWidth,
      problems: problems.slice(0, 20),
    };
  });
  await ed.screenshot('replay-detail-1280x800');
  assert.equal(report.sideways, 0, `the pane scrolls sideways: ${JSON.stringify(report)}`);
  assert.deepEqual(report.problems, [], `at ${report.paneWidth}px of ${report.windowWidth}px`);
  assert.ok(report.paneWidth >= 400, `the pane is ${report.paneWidth}px wide`);
});
