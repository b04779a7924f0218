// The Ask feature in a real extension host: quarry.ask run programmatically against the sample workspace's clinic
// database, the model an OpenAI-compatible replay server on 127.0.0.1 (the openai backend speaks real HTTP to it).
// What the host posted to the panel comes from the test-only hook `quarry.ask.testHook` (registered under tests).
import * as assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import { startReplayServer, type ReplayServer } from '../support/openaiReplayServer';
import { readTrajectories } from '../../src/core/trajectories/reader';
import type { AskAppState, AskState, ExchangeEvent, ToApp } from '../../src/protocol/ask';
import { applyEvent, emptyState, turnsUsed } from '../../src/protocol/askState';
import { until } from '../support/until';

const FIRST_Q = 'Which doctor has the most appointments?';
const FIRST_EXPLORE =
  'SELECT d.name, count(*) AS n FROM appointment a JOIN doctor d ON d.doctor_id = a.doctor_id GROUP BY ' +
  'd.name ORDER BY n DESC';
const FIRST_SQL =
  'SELECT d.name FROM appointment a JOIN doctor d ON d.doctor_id = a.doctor_id GROUP BY d.name ORDER BY ' +
  'count(*) DESC LIMIT 1';
const FOLLOW_Q = 'What is their specialty?';
const FOLLOW_SQL = "SELECT specialty FROM doctor WHERE name = 'Ines Duarte'";
const SLOW_Q = 'A slow question about fees';
const BIG_Q = 'Show every sensor reading';
const BIG_SQL = 'SELECT id, reading FROM sensor';
const READINGS = 12_345;

interface Outcome {
  id: string;
  end: string;
  finalSql: string | null;
  error: string | null;
}

const hook = <T>(op: string, message?: unknown) =>
  vscode.commands.executeCommand<T>('quarry.ask.testHook', op, message);
const posted = () => hook<ToApp[]>('posted');
const events = async (exchange: number): Promise<ExchangeEvent[]> =>
  (await posted()).flatMap((m) => (m.type === 'event' && m.exchange === exchange ? [m.event] : []));

/** The conversation as the webview holds it: the last full state the host posted, with every event after it applied. */
async function shownState(): Promise<AskState | undefined> {
  const all = await posted();
  const at = all.map((m) => m.type).lastIndexOf('state');
  if (at < 0) return undefined;
  const state = JSON.parse(JSON.stringify((all[at] as Extract<ToApp, { type: 'state' }>).state)) as AskState;
  for (const m of all.slice(at + 1)) if (m.type === 'event') applyEvent(state, m.exchange, m.event);
  return state;
}

/** Result timings differ between runs of the same SQL; everything else must match. */
const withoutTimings = (s: AskState) => ({
  ...s,
  exchanges: s.exchanges.map((x) => ({ ...x, result: x.result && { ...x.result, ms: 0 } })),
});

/** Hands `state` to the registered serializer with a fresh panel, as VS Code does after a window reload. */
const revive = (state: unknown) =>
  vscode.commands.executeCommand<string | null>('quarry.webviews.testHook', 'revive', 'quarry.ask', state);

/** Waits for a condition the extension reaches on its own (no timing is asserted; mocha's timeout bounds it). */
suite('Ask: quarry.ask against a loopback OpenAI-compatible server', () => {
  let server: ReplayServer;
  let folder: string;
  let db: string;
  const cfg = () => vscode.workspace.getConfiguration('quarry');

  /** Chat requests the stand-in server has received so far. */
  const chatRequests = () => server.requests.filter((r) => r.body !== null).length;

  suiteSetup(async () => {
    server = await startReplayServer({
      // 'other' is the model the last test switches to.
      models: ['replay', 'other'],
      script: [
        // The follow-up first: its conversation may quote the first question too.
        {
          match: FOLLOW_Q,
          turn: 0,
          response: `<think>The doctor found before; look up the specialty.</think>\n<sql>${FOLLOW_SQL}</sql>`,
        },
        { match: FOLLOW_Q, turn: 1, response: `<think>cardiology.</think>\n<solution>${FOLLOW_SQL}</solution>` },
        {
          match: FIRST_Q,
          turn: 0,
          response: `<think>Count appointments per doctor.</think>\n<sql>${FIRST_EXPLORE}</sql>`,
        },
        {
          match: FIRST_Q,
          turn: 1,
          response: `<think>Ines Duarte has the most.</think>\n<solution>${FIRST_SQL}</solution>`,
        },
        { match: SLOW_Q, response: '<think>never reached</think>' },
        { match: BIG_Q, response: `<think>All of them.</think>\n<solution>${BIG_SQL}</solution>` },
      ],
    });
    const ext = vscode.extensions.getExtension('quarry.quarry');
    assert.ok(ext, 'the extension is installed');
    await ext.activate();
    folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    db = join(folder, 'data', 'clinic.sqlite');
    await cfg().update('model.backend', 'openai', vscode.ConfigurationTarget.Workspace);
    await cfg().update('model.baseUrl', server.url, vscode.ConfigurationTarget.Workspace);
    await cfg().update('model.name', 'replay', vscode.ConfigurationTarget.Workspace);
    await cfg().update('agent.protocol', 'skyrl', vscode.ConfigurationTarget.Workspace);
    await hook('clear');
  });

  suiteTeardown(async () => {
    await hook('close').then(undefined, () => undefined);
    for (const k of ['model.backend', 'model.baseUrl', 'model.name', 'agent.protocol']) {
      await cfg().update(k, undefined, vscode.ConfigurationTarget.Workspace);
    }
    await server?.close();
  });

  test(
    'a question streams its turns to the panel, runs the final SQL, and its trajectory is appended to the ' +
      'store when it ends',
    async () => {
      const outcome = await vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: FIRST_Q });
      assert.ok(outcome, 'quarry.ask returned what happened');
      assert.deepEqual([outcome.end, outcome.finalSql, outcome.error], ['answer', FIRST_SQL, null]);

      const ev = await until('the final result', async () => {
        const e = await events(0);
        return e.some((x) => x.kind === 'result') && e;
      });
      const kinds = ev.map((e) => e.kind).filter((k) => k !== 'text');
      assert.deepEqual(kinds, [
        'start',
        'turn',
        'action',
        'exec',
        'observation',
        'turn',
        'action',
        'end',
        'saved',
        'resultRunning',
        'result',
      ]);
      const start = ev[0] as Extract<ExchangeEvent, { kind: 'start' }>;
      assert.deepEqual([start.id, start.question, start.protocol, start.budget], [outcome.id, FIRST_Q, 'skyrl', 5]);
      const exec = ev.find((e) => e.kind === 'exec') as Extract<ExchangeEvent, { kind: 'exec' }>;
      assert.deepEqual(exec.result.columns, ['name', 'n']);
      assert.deepEqual(exec.result.rows[0], ['Ines Duarte', 3], 'the observation table carries the real rows');
      const action = ev.find((e) => e.kind === 'action') as Extract<ExchangeEvent, { kind: 'action' }>;
      assert.deepEqual(
        [action.action.kind, action.action.thought, action.action.sql],
        ['execute', 'Count appointments per doctor.', FIRST_EXPLORE],
      );
      const result = ev.find((e) => e.kind === 'result') as Extract<ExchangeEvent, { kind: 'result' }>;
      assert.deepEqual(
        [result.result.ok, result.result.columns, result.result.rows],
        [true, ['name'], [['Ines Duarte']]],
      );
      assert.ok(
        ev.some((e) => e.kind === 'text'),
        'the openai backend streamed text',
      );

      // The webview app is real: its bundle loads under the CSP, runs, and says 'ready' over the real channel.
      await until('the webview app to say ready', async () => (await hook<string[]>('fromWebview')).includes('ready'));

      // One save policy (src/app/trajectoryStore.ts): saved without pressing anything; Save then only says where.
      const store = join(folder, '.quarry', 'trajectories', 'asked.jsonl');
      assert.ok(existsSync(store), `${store} was written`);
      await hook('send', { type: 'saveTrajectory', exchange: 0 });
      const { records } = await readTrajectories(store);
      assert.equal(records.filter((r) => r.id === outcome.id).length, 1, 'saved once');
      const rec = records.find((r) => r.id === outcome.id);
      assert.ok(rec, 'the episode is in the store');
      assert.deepEqual(
        [rec.end, rec.finalSql, rec.protocol.name, rec.task.question, rec.turns.length],
        ['answer', FIRST_SQL, 'skyrl', FIRST_Q, 2],
      );
      assert.equal(rec.model.spec, `openai:${server.url}#replay`);
      assert.ok(
        ev.length > 0 && (await events(0)).some((e) => e.kind === 'saved' && e.path === store),
        'the panel is told where',
      );
    },
  );

  test('a follow-up in the same panel keeps skyrl and carries the earlier question, SQL and result shown', async () => {
    const before = server.requests.length;
    const outcome = await vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: FOLLOW_Q });
    assert.deepEqual([outcome.end, outcome.finalSql], ['answer', FOLLOW_SQL]);
    const ev = await until('the follow-up result', async () => {
      const e = await events(1);
      return e.some((x) => x.kind === 'result') && e;
    });
    const start = ev[0] as Extract<ExchangeEvent, { kind: 'start' }>;
    assert.deepEqual([start.kind, start.protocol], ['start', 'skyrl']);
    const sent = JSON.stringify(server.requests.slice(before).map((r) => r.body?.messages));
    assert.ok(sent.includes(`Earlier in this conversation:\\n1. Question: ${FIRST_Q}`), sent);
    assert.ok(sent.includes("Result: [('Ines Duarte',)]"), sent);
    const result = ev.find((e) => e.kind === 'result') as Extract<ExchangeEvent, { kind: 'result' }>;
    assert.deepEqual(result.result.rows, [['cardiology']]);
    const { records } = await readTrajectories(join(folder, '.quarry', 'trajectories', 'asked.jsonl'));
    const rec = records.find((r) => r.id === outcome.id);
    assert.ok(rec);
    assert.deepEqual(rec.task.history, [{ question: FIRST_Q, sql: FIRST_SQL, result: "[('Ines Duarte',)]" }]);
  });

  test(
    "the final SQL's actions: Copy, Open in Editor, Insert at Cursor (last text editor), Label (labeling " +
      'opens on it)',
    async () => {
      await hook('send', { type: 'copySql', exchange: 0 });
      assert.equal(await vscode.env.clipboard.readText(), FIRST_SQL);

      await hook('send', { type: 'openSql', exchange: 0 });
      const opened = vscode.window.activeTextEditor;
      assert.ok(opened, 'a text editor is active');
      assert.deepEqual(
        [opened.document.languageId, opened.document.getText().trim(), opened.document.isUntitled],
        ['sql', FIRST_SQL, true],
      );
      assert.equal(
        await vscode.commands.executeCommand('quarry.sqlEditor.testHook', 'binding', opened.document.uri.toString()),
        db,
        "bound to the answer's database, so Run Query works at once",
      );

      const target = await vscode.workspace.openTextDocument({ language: 'sql', content: '-- before\n\n-- after\n' });
      const editor = await vscode.window.showTextDocument(target);
      editor.selection = new vscode.Selection(1, 0, 1, 0);
      await hook('send', { type: 'insertSql', exchange: 0 });
      assert.equal(target.getText(), `-- before\n${FIRST_SQL}\n-- after\n`);

      await hook('send', { type: 'label', exchange: 0 });
      const id = (await events(0)).find((e) => e.kind === 'start') as Extract<ExchangeEvent, { kind: 'start' }>;
      await until('the labeling panel to get the trajectory', async () =>
        JSON.stringify(await vscode.commands.executeCommand('quarry.labeling.testHook', 'posted')).includes(id.id),
      );
      await vscode.commands.executeCommand('quarry.labeling.testHook', 'close');
    },
  );

  test('messages a webview could send wrongly are refused, not acted on', async () => {
    await hook('clear');
    await hook('send', { type: 'run', exchange: 7 });
    await hook('send', { type: 'grid', exchange: 0, message: { type: 'export', format: 'exe' } });
    await hook('send', { type: 'ask', question: '' });
    await hook('send', { type: 'eval', code: 'x' });
    const rejected = await hook<string[]>('rejected');
    assert.equal(rejected.length, 4, rejected.join('\n'));
    assert.match(rejected[0], /exchange 7 does not exist \(there are 2\)/);
    assert.match(rejected[1], /grid: export: unknown format "exe"/);
    assert.match(rejected[2], /the question is empty/);
    assert.match(rejected[3], /unknown message type "eval"/);
    assert.deepEqual(
      (await posted()).filter((m) => m.type === 'event'),
      [],
      'nothing ran',
    );
  });

  test('Stop cancels a running question; the cancelled trajectory is saved too', async () => {
    server.hangNext(1);
    const sent = chatRequests();
    const running = vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: SLOW_Q });
    await until('the slow question to start its first turn', async () =>
      (await events(2)).some((e) => e.kind === 'turn'),
    );
    // Its model request has reached the server (which holds it), so the hang is used by this question.
    await until('the model request to reach the server', async () => chatRequests() > sent);
    await hook('send', { type: 'stop' });
    const outcome = await running;
    assert.deepEqual([outcome.end, outcome.finalSql], ['cancelled', null]);
    const ev = await events(2);
    const end = ev.find((e) => e.kind === 'end') as Extract<ExchangeEvent, { kind: 'end' }>;
    assert.equal(end.end, 'cancelled');
    const { records } = await readTrajectories(join(folder, '.quarry', 'trajectories', 'asked.jsonl'));
    const stopped = records.find((r) => r.id === outcome.id);
    assert.equal(stopped?.end, 'cancelled');
    // Stopped while the model answered its first turn: 0 turns in the record, and 0 on the card (not "1 / 5").
    assert.equal(stopped?.turns.length, 0);
    const replayed = emptyState();
    for (const e of await events(2)) applyEvent(replayed, 0, e);
    const card = replayed.exchanges[0];
    assert.ok(card?.savedTo, 'saved on its own');
    assert.equal(card && turnsUsed(card), 0);
    const chat = server.requests.filter((r) => r.body !== null);
    assert.equal(chat[chat.length - 1].clientClosed, true, 'the HTTP request was aborted, not left running');
  });

  test('closing the panel mid-run cancels the episode cleanly', async () => {
    server.hangNext(1);
    const sent = chatRequests();
    const running = vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: SLOW_Q });
    await until('the question to start', async () => (await events(3)).some((e) => e.kind === 'turn'));
    await until('the model request to reach the server', async () => chatRequests() > sent);
    await hook('close');
    const outcome = await running;
    assert.equal(outcome.end, 'cancelled');
    // A new panel starts a new conversation.
    await hook('clear');
    const again = await vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: FIRST_Q });
    assert.equal(again.end, 'answer');
    const start = (await events(0))[0] as Extract<ExchangeEvent, { kind: 'start' }>;
    assert.equal(start.protocol, 'skyrl', 'a fresh panel: the first question uses the chosen protocol again');
  });

  test('after a window reload the conversation comes back from the trajectory store, results run again', async () => {
    const follow = await vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: FOLLOW_Q });
    assert.equal(follow.end, 'answer');
    await until('the follow-up result', async () => (await events(1)).some((e) => e.kind === 'result'));
    const before = await shownState();
    assert.ok(before && before.exchanges.length === 2 && before.exchanges.every((x) => x.result?.ok));
    // What the app saved (AskAppState) when the window went away.
    const saved: AskAppState = { state: before, draft: 'and the fees?', open: [] };
    await hook('close');
    await hook('clear');
    assert.equal(await revive(JSON.parse(JSON.stringify(saved))), null);
    const after = await until('both results shown again', async () => {
      const s = await shownState();
      return s && s.exchanges.length === 2 && s.exchanges.every((x) => x.result !== null && !x.resultRunning) && s;
    });
    assert.deepEqual(withoutTimings(after), withoutTimings(before));
    // The revived panel carries on: its exchanges answer the actions, and the next question is a follow-up.
    await hook('send', { type: 'copySql', exchange: 1 });
    assert.equal(await vscode.env.clipboard.readText(), FOLLOW_SQL);
    await hook('close');
    const relative = { state: { db: { path: 'clinic.sqlite', label: 'x' } } };
    assert.match((await revive(relative)) ?? '', /db path is not an absolute path/);
    await hook('close');
  });

  test(
    'switching database keeps the conversation in a list, also after a reload; ' + 'picking it brings it back',
    async () => {
      await hook('clear');
      const asked = await vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: FIRST_Q });
      assert.equal(asked.end, 'answer');
      await until('the result', async () => (await events(0)).some((e) => e.kind === 'result'));
      const orchard = join(folder, 'data', 'orchard.sqlite');
      await vscode.commands.executeCommand('quarry.ask', { db: orchard, pickDatabase: true });
      const switched = await shownState();
      assert.equal(switched?.db?.path, orchard);
      assert.deepEqual(switched?.exchanges, []);
      assert.deepEqual(
        switched?.conversations?.map((c) => [c.db.path, c.first, c.questions]),
        [[db, FIRST_Q, 1]],
      );
      const notices = (await posted()).flatMap((m) => (m.type === 'notice' ? [m.text] : []));
      assert.ok(
        notices.some((t) => /The one about .*clinic.* is kept/.test(t)),
        notices.join('\n'),
      );
      // A window reload: the list comes back too, rebuilt from the trajectory store by the ids the app saved.
      const saved: AskAppState = { state: switched!, draft: '', open: [] };
      await hook('close');
      await hook('clear');
      assert.equal(await revive(JSON.parse(JSON.stringify(saved))), null);
      const revived = await shownState();
      assert.equal(revived?.db?.path, orchard);
      assert.deepEqual(
        revived?.conversations?.map((c) => [c.db.path, c.first, c.questions, c.exchanges]),
        [[db, FIRST_Q, 1, [{ id: asked.id, hadResult: true }]]],
      );
      await hook('send', { type: 'openConversation', index: 0 });
      // Its result, shown before the reload, runs again when it is brought back.
      const back = await until('the kept conversation back with its result', async () => {
        const s = await shownState();
        return s?.exchanges[0]?.result && !s.exchanges[0].resultRunning && s;
      });
      assert.equal(back?.db?.path, db);
      assert.deepEqual(
        back?.exchanges.map((x) => [x.id, x.question, x.finalSql, x.result?.ok]),
        [[asked.id, FIRST_Q, FIRST_SQL, true]],
      );
      assert.deepEqual(back?.conversations, [], 'the empty orchard conversation is not kept');
      await hook('send', { type: 'copySql', exchange: 0 });
      assert.equal(await vscode.env.clipboard.readText(), FIRST_SQL, 'its actions work again');
      await hook('send', { type: 'openConversation', index: 3 });
      assert.match(JSON.stringify(await posted()), /There is no conversation 4/);
      await hook('close');
    },
  );

  test('the final result grid pages, sorts and filters the whole result in SQLite, past the rows kept', async () => {
    const big = join(tmpdir(), `quarry-ask-sensor-${process.pid}.sqlite`);
    // better-sqlite3 as the extension loads it (built for this extension host's Node).
    const extensionPath = vscode.extensions.getExtension('quarry.quarry')!.extensionPath;
    const Database = createRequire(join(extensionPath, 'package.json'))(
      'better-sqlite3',
    ) as typeof import('better-sqlite3');
    const d = new Database(big);
    // The largest reading is the last row, far past the rows the conversation keeps of the result.
    d.exec(`CREATE TABLE sensor(id INTEGER PRIMARY KEY, reading REAL);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${READINGS})
      INSERT INTO sensor SELECT i, (i % 1000) * 0.5 + (i = ${READINGS}) * 100000 FROM n;`);
    const largest = d.prepare('SELECT max(reading) FROM sensor').pluck().get() as number;
    const over = d.prepare('SELECT count(*) FROM sensor WHERE reading > 499').pluck().get() as number;
    d.close();
    try {
      await hook('clear');
      const asked = await vscode.commands.executeCommand<Outcome>('quarry.ask', { db: big, question: BIG_Q });
      assert.equal(asked.finalSql, BIG_SQL);
      const result = await until('the result', async () => {
        const e = (await events(0)).find((x) => x.kind === 'result');
        return e?.kind === 'result' && e.result;
      });
      assert.equal(result.rowCount, READINGS);
      assert.ok(result.rows.length <= 200, 'the conversation keeps a few rows; the grid pages the rest');
      const grid = async (message: unknown) => {
        await hook('clear');
        await hook('send', { type: 'grid', exchange: 0, message });
        const pages = (await posted()).flatMap((m) =>
          m.type === 'grid' && m.exchange === 0 && m.message.type === 'page' ? [m.message.page] : [],
        );
        assert.equal(pages.length, 1, JSON.stringify(await posted()).slice(0, 500));
        return pages[0];
      };
      const first = await grid({ type: 'page', offset: 0, limit: 200, filters: [] });
      assert.equal(first.total, READINGS);
      assert.deepEqual(first.realColumns, [false, true]);
      assert.deepEqual(first.notes, [], 'no cell is cut: the rows past the first page are not cut cells');
      const last = await grid({ type: 'page', offset: 12_200, limit: 200, filters: [] });
      assert.deepEqual(last.rows.at(-1), [READINGS, largest], 'the last page is the end of the whole result');
      const sorted = await grid({ type: 'page', offset: 0, limit: 200, sortColumn: 1, descending: true, filters: [] });
      assert.deepEqual(sorted.rows[0], [READINGS, largest], "sorted in SQLite: the result's largest, not a page's");
      const filtered = await grid({ type: 'page', offset: 0, limit: 200, filters: [{ column: 1, text: '>499' }] });
      assert.equal(filtered.total, over);
    } finally {
      await hook('close');
      rmSync(big, { force: true });
    }
  });

  test('another model on the same database starts a new conversation; each card names its model', async () => {
    await hook('clear');
    const first = await vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: FIRST_Q });
    assert.equal(first.end, 'answer');
    const start = (await events(0))[0] as Extract<ExchangeEvent, { kind: 'start' }>;
    assert.equal(start.model, 'openai · replay');
    try {
      await cfg().update('model.name', 'other', vscode.ConfigurationTarget.Workspace);
      await hook('clear');
      const next = await vscode.commands.executeCommand<Outcome>('quarry.ask', { db, question: FOLLOW_Q });
      assert.equal(next.end, 'answer');
      const shown = await shownState();
      // Not appended as Q2 of the conversation with the other model: its own Q1, the old one kept in the list.
      assert.deepEqual(
        shown?.exchanges.map((x) => [x.id, x.model]),
        [[next.id, 'openai · other']],
      );
      assert.deepEqual(
        shown?.conversations?.map((c) => [c.first, c.questions]),
        [[FIRST_Q, 1]],
      );
      const notices = (await posted()).flatMap((m) => (m.type === 'notice' ? [m.text] : []));
      assert.ok(
        notices.some((t) => /model is now openai · other, not openai · replay/.test(t)),
        notices.join('\n'),
      );
      const { records } = await readTrajectories(join(folder, '.quarry', 'trajectories', 'asked.jsonl'));
      assert.deepEqual(records.find((r) => r.id === next.id)?.task.history, [], 'nothing carried over');
    } finally {
      await cfg().update('model.name', 'replay', vscode.ConfigurationTarget.Workspace);
      await hook('close');
    }
  });
});
