// Labeling in a real extension host. The fixture trajectories are real runs of the core agent loop (skyrl) against
// the sample workspace's clinic database with a scripted in-process ChatModel (the model is the only stand-in) and
// the extension's own sandbox pool. The panel is driven through its message handlers (the same validation a webview's
// messages go through, via the test-only hook `quarry.labeling.testHook`); labels are checked in the SQLite store.
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import Database from 'better-sqlite3';
import { runEpisode } from '../../src/core/agent/loop';
import type { ChatModel } from '../../src/core/models/types';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import type { QuarryApi } from '../../src/extension/extension';
import type { ToApp } from '../../src/protocol/labeling';
import { unpackRows, type ToApp as ReplayToApp } from '../../src/protocol/replay';
import { scriptedModel } from '../support/scriptedModel';
import { until } from '../support/until';

const EXTENSION_ID = 'quarry.quarry';
const Q_TOP = 'Which doctor has the most appointments?';
const GOLD_TOP =
  'SELECT T2.name FROM appointment AS T1 JOIN doctor AS T2 ON T1.doctor_id = T2.doctor_id GROUP BY ' +
  'T2.name ORDER BY count(*) DESC LIMIT 1';
const Q_KIDS = 'How many patients were born after 2010?';
const GOLD_KIDS = 'SELECT count(*) FROM patient WHERE born > 2010';

const scripted = (replies: string[]): ChatModel =>
  scriptedModel(replies, 'scripted:labeling-test', { usage: () => ({ promptTokens: 12, completionTokens: 7 }) });

const hook = <T>(op: string, message?: unknown) =>
  vscode.commands.executeCommand<T>('quarry.labeling.testHook', op, message);
const posted = () => hook<ToApp[]>('posted');
/** Hands `state` to the registered serializer with a fresh panel, as VS Code does after a window reload. */
const revive = (state: unknown) =>
  vscode.commands.executeCommand<string | null>('quarry.webviews.testHook', 'revive', 'quarry.labeling', state);

async function lastOf<K extends ToApp['type']>(type: K): Promise<Extract<ToApp, { type: K }> | undefined> {
  return (await posted()).filter((m): m is Extract<ToApp, { type: K }> => m.type === type).pop();
}

/** Sends a message as the app would and returns what the host posted in answer. */
async function send(message: unknown): Promise<ToApp[]> {
  await hook('clear');
  await hook('send', message);
  await hook('idle');
  return posted();
}

const itemOf = (ms: ToApp[]) => ms.filter((m): m is Extract<ToApp, { type: 'item' }> => m.type === 'item').pop();
/** The first message of `type` among `ms`. */
const firstOf = <K extends ToApp['type']>(ms: ToApp[], type: K) =>
  ms.find((m): m is Extract<ToApp, { type: K }> => m.type === type);
const runResultOf = (ms: ToApp[]) => firstOf(ms, 'runResult');
const gridOf = (ms: ToApp[]) => firstOf(ms, 'grid');

/** The app's grid of run `seq` asking for its first page (of up to 200 rows). */
const firstPage = (runSeq: number, id: string) =>
  send({ type: 'grid', seq: runSeq, id, message: { type: 'page', offset: 0, limit: 200, filters: [] } });

/** The store as another process sees it: a separate read-only SQLite connection. */
function storeRows(
  path: string,
): { id: string; verdict: string | null; corrected: string | null; note: string; tags: string | null }[] {
  const db = new Database(path, { readonly: true });
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

suite('Labeling: quarry.openLabeling on real agent runs, labels in the workspace store', () => {
  let file: string;
  let records: TrajectoryRecord[];
  let storePath: string;
  let seq = 1;

  suiteSetup(async function () {
    this.timeout(120_000);
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is installed`);
    const { services } = (await ext.activate()) as QuarryApi;
    const pool = await services.pool();
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const db = join(folder, 'data', 'clinic.sqlite');
    const run = (id: string, question: string, gold: string | undefined, replies: string[]) =>
      runEpisode({
        id,
        protocolName: 'skyrl',
        config: { maxTurns: 3 },
        pool,
        model: scripted(replies),
        task: { id, question, dbPath: db, gold },
      });
    records = [
      await run('lab-top', Q_TOP, GOLD_TOP, [
        '<think>count per doctor</think>\n<sql>SELECT doctor_id, count(*) FROM appointment GROUP BY doctor_id</sql>',
        '<think>take the last doctor</think>\n<solution>SELECT name FROM doctor ORDER BY doctor_id DESC ' +
          'LIMIT 1</solution>',
      ]),
      await run('lab-kids', Q_KIDS, GOLD_KIDS, [
        '<think>filter</think>\n<solution>SELECT count(*) FROM patient WHERE born > 2010</solution>',
      ]),
      await run('lab-free', 'List the cities of our patients', undefined, [
        '<think>cities</think>\n<solution>SELECT DISTINCT city FROM patient</solution>',
      ]),
    ];
    const dir = join(folder, '.quarry-test');
    mkdirSync(dir, { recursive: true });
    file = join(dir, 'labeling-run.jsonl');
    writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    storePath = await hook<string>('storePath');
    assert.equal(storePath, join(folder, '.quarry', 'labels.sqlite'));
    await hook('clear');
  });

  suiteTeardown(async () => {
    await hook('close');
  });

  test('opening a file shows the queue (unlabeled first), the progress and the first trajectory', async () => {
    await vscode.commands.executeCommand('quarry.openLabeling', file);
    const item = await until('item', () => lastOf('item'));
    const queue = (await lastOf('queue'))!.queue;
    assert.equal(queue.file, file);
    assert.equal(queue.total, 3);
    assert.equal(queue.size, 3);
    assert.equal(queue.labeled, 0);
    assert.equal(queue.filter, 'unlabeled-first');
    assert.equal(item.position, 0);
    assert.equal(item.record.id, 'lab-top');
    assert.equal(item.label, null);
    const tags = (await lastOf('tags'))!;
    assert.deepEqual(
      tags.tags.slice(0, 7).map((t) => t.name),
      ['overconfidence', 'loop', 'schema hallucination', 'wrong join', 'aggregation drift', 'value mismatch', 'format'],
    );
  });

  test('Run on a corrected SQL executes it in the sandbox and compares it with the gold', async () => {
    const wrong = await send({
      type: 'run',
      seq: seq++,
      id: 'lab-top',
      sql: 'SELECT name FROM doctor ORDER BY doctor_id DESC LIMIT 1',
    });
    const w = runResultOf(wrong);
    assert.ok(w, JSON.stringify(wrong));
    assert.equal(w.outcome.against, 'gold');
    assert.equal(w.outcome.match, false);
    const right = await send({
      type: 'run',
      seq: seq++,
      id: 'lab-top',
      sql: GOLD_TOP.replace('T2.name', 'T2.name AS doctor'),
    });
    const r = runResultOf(right);
    assert.ok(r);
    assert.deepEqual([r.outcome.match, r.outcome.reason, r.outcome.error], [true, 'match', null]);
    assert.deepEqual([r.outcome.columns, r.outcome.rowCount], [['doctor'], 1]);
    // The rows come through the run's paged grid, a page of the whole result at a time.
    const page = await firstPage(r.seq, 'lab-top');
    const g = gridOf(page);
    assert.ok(g && g.message.type === 'page', JSON.stringify(page));
    assert.deepEqual([g.seq, g.message.page.columns, g.message.page.total], [r.seq, ['doctor'], 1]);
    // An older run's grid is gone: its page request is refused, not answered.
    assert.deepEqual(await firstPage(w.seq, 'lab-top'), []);
    assert.match((await hook<string[]>('rejected')).pop() ?? '', /not the newest result/);
    const broken = await send({ type: 'run', seq: seq++, id: 'lab-top', sql: 'SELECT nme FROM doctor' });
    const b = runResultOf(broken);
    assert.ok(b);
    assert.equal(b.outcome.match, false);
    assert.match(b.outcome.error ?? '', /no such column: nme/);
    const free = await send({ type: 'run', seq: seq++, id: 'lab-free', sql: 'SELECT city FROM patient GROUP BY city' });
    const f = runResultOf(free);
    assert.ok(f);
    assert.equal(f.outcome.against, 'final', 'no gold: compared with the final SQL');
    assert.equal(f.outcome.match, true);
  });

  test('saving a label commits it to the store before the panel hears "saved"; the progress counts it', async () => {
    const answer = await send({
      type: 'save',
      seq: 41,
      id: 'lab-top',
      verdict: 'incorrect',
      correctedSql: GOLD_TOP,
      tags: ['wrong join', 'overconfidence'],
      note: 'took the last doctor',
    });
    const saved = firstOf(answer, 'saved');
    assert.ok(saved, JSON.stringify(answer));
    assert.deepEqual([saved.seq, saved.id, saved.labeled, saved.total], [41, 'lab-top', 1, 3]);
    assert.deepEqual(
      storeRows(storePath).filter((r) => r.id === 'lab-top'),
      [
        {
          id: 'lab-top',
          verdict: 'incorrect',
          corrected: GOLD_TOP,
          note: 'took the last doctor',
          tags: 'overconfidence,wrong join',
        },
      ],
    );
    const db = new Database(storePath, { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
    }
  });

  test('next/previous move through the queue; a reviewer tag is added and offered', async () => {
    const next = itemOf(await send({ type: 'go', position: 1 }));
    assert.ok(next);
    assert.equal(next.record.id, 'lab-kids');
    await send({ type: 'save', seq: 42, id: 'lab-kids', verdict: 'correct', correctedSql: '', tags: [], note: '' });
    const tagged = await send({ type: 'addTag', name: 'Ambiguous  Question' });
    const tags = firstOf(tagged, 'tags');
    assert.ok(tags?.tags.some((t) => t.name === 'ambiguous question' && !t.builtin));
    const back = itemOf(await send({ type: 'go', position: 0 }));
    assert.ok(back);
    assert.equal(back.record.id, 'lab-top');
    assert.equal(back.label?.verdict, 'incorrect');
    assert.deepEqual(back.label?.tags, ['overconfidence', 'wrong join']);
    assert.equal(back.changed, false);
  });

  test('the filter reorders the queue; reopening the panel brings the labels back from the store', async () => {
    const answer = await send({ type: 'setFilter', filter: 'unlabeled' });
    const queue = firstOf(answer, 'queue')?.queue;
    assert.ok(queue);
    assert.deepEqual([queue.size, queue.labeled, queue.filter], [1, 2, 'unlabeled']);
    assert.equal(itemOf(answer)?.record.id, 'lab-free');
    await hook('close');
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openLabeling', { file, id: 'lab-top' });
    const item = await until('item', () => lastOf('item'));
    assert.equal(item.record.id, 'lab-top');
    assert.equal(item.label?.correctedSql, GOLD_TOP);
    assert.equal((await lastOf('queue'))?.queue.labeled, 2);
  });

  test('the app coming back after being hidden gets its trajectory again', async () => {
    const answer = await send({ type: 'ready', position: 2, id: 'lab-kids' });
    assert.equal(itemOf(answer)?.record.id, 'lab-kids', 'the id wins over the position');
  });

  test('the app coming back on the trajectory of the newest run gets that run again, and its grid pages', async () => {
    const ran = await send({ type: 'run', seq: seq++, id: 'lab-top', sql: GOLD_TOP });
    const r = runResultOf(ran);
    assert.ok(r && r.outcome.match === true, JSON.stringify(ran));
    // The webview reloaded (hidden, then shown): it asks for what it showed, and its run comes back with it.
    const answer = await send({ type: 'ready', position: 0, id: 'lab-top' });
    assert.equal(itemOf(answer)?.record.id, 'lab-top');
    const again = runResultOf(answer);
    assert.ok(again, JSON.stringify(answer));
    assert.deepEqual([again.seq, again.restored, again.outcome], [r.seq, true, r.outcome]);
    const page = await firstPage(again.seq, 'lab-top');
    const g = gridOf(page);
    assert.ok(g && g.message.type === 'page', JSON.stringify(page));
    assert.equal(g.message.page.total, 1);
    // On another trajectory the run is not sent.
    const other = await send({ type: 'ready', position: 0, id: 'lab-kids' });
    assert.equal(itemOf(other)?.record.id, 'lab-kids');
    assert.ok(!other.some((m) => m.type === 'runResult'), JSON.stringify(other));
  });

  test('after a window reload the serializer brings the queue back on its file, filter and trajectory', async () => {
    const queueBefore = (await lastOf('queue'))!.queue;
    await hook('close');
    await hook('clear');
    // What the app saved (LabelAppState) with an unsaved edit; the edit stays in the app, the host restores the queue.
    const draft = { id: 'lab-kids', verdict: '', correctedSql: 'x', tags: [], note: '', dirty: true };
    const saved = { file, filter: 'all', position: 1, id: 'lab-kids', draft, showHelp: false };
    assert.equal(await revive(saved), null);
    const item = await until('the trajectory again', () => lastOf('item'));
    assert.equal(item.record.id, 'lab-kids');
    assert.equal(item.label?.verdict, 'correct', 'its label comes from the store');
    const queue = (await lastOf('queue'))!.queue;
    assert.deepEqual(
      [queue.file, queue.filter, queue.total, queue.labeled],
      [file, 'all', queueBefore.total, queueBefore.labeled],
    );
    await hook('close');
    await hook('clear');
    assert.match((await revive({ ...saved, filter: 'newest' })) ?? '', /unknown filter "newest"/);
    const said = await posted();
    assert.deepEqual(
      said.map((m) => m.type),
      ['error'],
      'nothing was read',
    );
    assert.match(said[0].type === 'error' ? said[0].message : '', /could not come back .*unknown filter/);
    await hook('close');
  });

  test(
    'the Ask panel’s hand-offs: {path, id} opens that ' + 'trajectory; a bare {trajectory} is saved to the store first',
    async () => {
      await hook('clear');
      await vscode.commands.executeCommand('quarry.openLabeling', { path: file, id: 'lab-free' });
      assert.equal((await until('item', () => lastOf('item'))).record.id, 'lab-free');
      const fresh: TrajectoryRecord = { ...records[1], id: 'lab-handed-over' };
      await hook('clear');
      await vscode.commands.executeCommand('quarry.openLabeling', { trajectory: fresh });
      const item = await until('item', () => lastOf('item'));
      assert.equal(item.record.id, 'lab-handed-over');
      const store = (await lastOf('queue'))!.queue.file;
      const lines = readFileSync(store, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id);
      assert.equal(lines.filter((id) => id === 'lab-handed-over').length, 1);
      await hook('clear');
      await vscode.commands.executeCommand('quarry.openLabeling', { trajectory: fresh });
      await until('item', () => lastOf('item'));
      const again = readFileSync(store, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id);
      assert.equal(again.filter((id) => id === 'lab-handed-over').length, 1, 'not appended twice');
      await hook('clear');
      await vscode.commands.executeCommand('quarry.openLabeling', file);
      await until('item', () => lastOf('item'));
    },
  );

  test(
    'a store locked by another process: the save ' + 'fails with a clear message and nothing is written',
    async function () {
      this.timeout(60_000);
      const other = new Database(storePath);
      other.exec('BEGIN IMMEDIATE');
      let answer: ToApp[];
      try {
        answer = await send({
          type: 'save',
          seq: 77,
          id: 'lab-free',
          verdict: 'unsure',
          correctedSql: '',
          tags: [],
          note: 'while locked',
        });
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      const failed = firstOf(answer, 'saveFailed');
      assert.ok(failed, JSON.stringify(answer));
      assert.equal(failed.seq, 77);
      assert.match(failed.message, /label store .*labels\.sqlite is locked by another process \(waited 5000 ms\)/);
      assert.equal(
        storeRows(storePath).find((r) => r.id === 'lab-free'),
        undefined,
      );
      const retried = await send({
        type: 'save',
        seq: 78,
        id: 'lab-free',
        verdict: 'unsure',
        correctedSql: '',
        tags: [],
        note: 'after the lock',
      });
      assert.ok(retried.some((m) => m.type === 'saved'));
      await send({ type: 'save', seq: 79, id: 'lab-free', verdict: '', correctedSql: '', tags: [], note: '' });
    },
  );

  test('every message is checked: bad ones are refused and change nothing', async () => {
    const before = storeRows(storePath);
    const rejected: string[] = [];
    for (const bad of [
      { type: 'save', seq: 1, id: 'lab-free', verdict: 'great', correctedSql: '', tags: [], note: '' },
      { type: 'save', seq: 1, id: 'lab-free', verdict: 'correct', correctedSql: '', tags: [7], note: '' },
      { type: 'save', seq: 1, id: 'lab-free', verdict: 'correct', correctedSql: 5, tags: [], note: '' },
      { type: 'go', position: -1 },
      { type: 'go', position: 1.5 },
      { type: 'setFilter', filter: 'everything' },
      { type: 'run', seq: 1, id: 'lab-top', sql: '   ' },
      { type: 'drop', table: 'labels' },
      'save',
    ]) {
      const answer = await send(bad);
      assert.deepEqual(answer, [], `nothing posted for ${JSON.stringify(bad)}`);
      rejected.push(...(await hook<string[]>('rejected')));
    }
    assert.equal(rejected.length, 9);
    assert.match(rejected[0], /unknown verdict "great"/);
    assert.match(rejected[7], /unknown message type "drop"/);
    assert.deepEqual(storeRows(storePath), before);
  });

  test(
    'exports: SFT from the store (loss on assistant turns ' + 'only, corrected answer substituted) and RL prompts',
    async () => {
      const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
      const sftOut = join(folder, '.quarry-test', 'sft.jsonl');
      const rlOut = join(folder, '.quarry-test', 'rl.jsonl');
      const sft = await vscode.commands.executeCommand<{ written: number; skipped: unknown[] }>(
        'quarry.exportSft',
        sftOut,
      );
      assert.ok(sft && existsSync(sftOut));
      const examples = readFileSync(sftOut, 'utf8')
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              id: string;
              source: string;
              messages: { role: string; content: string; loss: boolean }[];
            },
        );
      const top = examples.find((e) => e.id === 'lab-top');
      const kids = examples.find((e) => e.id === 'lab-kids');
      assert.ok(top && kids);
      assert.equal(top.source, 'corrected');
      assert.deepEqual(top.messages.at(-1), {
        role: 'assistant',
        content: `<solution>${GOLD_TOP}</solution>`,
        loss: true,
      });
      assert.equal(kids.source, 'as-generated');
      for (const e of examples) assert.ok(e.messages.every((m) => m.loss === (m.role === 'assistant')));
      const rl = await vscode.commands.executeCommand<{ written: number; skipped: { id: string }[] }>(
        'quarry.exportRlPrompts',
        file,
        rlOut,
      );
      assert.equal(rl?.written, 2);
      assert.deepEqual(
        rl.skipped.map((s) => s.id),
        ['lab-free'],
        'no gold and no corrected SQL: no RL prompt',
      );
      const prompts = readFileSync(rlOut, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { question: string; gold_sql: string; gold_source: string });
      assert.deepEqual(
        prompts.map((p) => [p.question, p.gold_sql, p.gold_source]),
        [
          [Q_TOP, GOLD_TOP, 'label'],
          [Q_KIDS, GOLD_KIDS, 'task'],
        ],
      );
    },
  );

  test('the replay list shows the store’s labels (verdict · tags) for the labeled trajectories', async () => {
    const replayHook = <T>(op: string) => vscode.commands.executeCommand<T>('quarry.replay.testHook', op);
    await replayHook('clear');
    await vscode.commands.executeCommand('quarry.openReplay', file);
    const list = await until('replay list', async () =>
      (await replayHook<ReplayToApp[]>('posted'))
        .filter((m): m is Extract<ReplayToApp, { type: 'list' }> => m.type === 'list' && m.file === file)
        .pop(),
    );
    const rows = unpackRows(list.rows);
    // The replay feature words the label; what matters here is that the panel's verdicts and tags reach it.
    const labelOf = new Map(rows.map((r) => [r.id, r.label ?? '']));
    assert.match(labelOf.get('lab-top')!, /^incorrect\b.*overconfidence.*wrong join/);
    assert.match(labelOf.get('lab-kids')!, /^correct\b/);
    assert.doesNotMatch(labelOf.get('lab-free')!, /correct|unsure/, 'a label without a verdict shows none');
    await replayHook('close');
  });
});
