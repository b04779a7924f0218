// The @quarry chat participant's handler in a real extension host, against the sample workspace and the loopback
// OpenAI-compatible replay server. A chat view needs a language-model provider to send anything, which a test editor
// lacks, so `quarry.chat.testHook` (registered under tests) calls the handler with a recording response stream and a
// real CancellationTokenSource; everything behind it (settings, model, sandbox, store) is the real thing.
import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import { startReplayServer, type ReplayServer } from '../support/openaiReplayServer';
import { readTrajectories } from '../../src/core/trajectories/reader';
import type { QuarryChatMetadata, StreamPart } from '../../src/extension/chat/index';

const CITY_Q = 'How many patients live in each city? Use clinic.sqlite';
const CITY_SQL = 'SELECT city, count(*) AS patients FROM patient GROUP BY city ORDER BY city';
const FOLLOW_Q = 'Only the ones born before 1980';
const FOLLOW_SQL = 'SELECT city, count(*) AS patients FROM patient WHERE born < 1980 GROUP BY city ORDER BY city';
const TREES_Q = 'How many trees are there?';
const SLOW_Q = 'Something slow';

interface ChatRun {
  parts: StreamPart[];
  result: vscode.ChatResult;
}
const chat = (req: {
  prompt: string;
  references?: string[];
  history?: { question: string; metadata: QuarryChatMetadata }[];
  cancelOnProgress?: string;
  cancel?: boolean;
}) => vscode.commands.executeCommand<ChatRun>('quarry.chat.testHook', req);
const markdown = (r: ChatRun) => r.parts.flatMap((p) => (p.kind === 'markdown' ? [p.text] : [])).join('');
const progress = (r: ChatRun) => r.parts.flatMap((p) => (p.kind === 'progress' ? [p.text] : []));
const buttons = (r: ChatRun) => r.parts.flatMap((p) => (p.kind === 'button' ? [p] : []));

suite('@quarry chat participant', () => {
  let server: ReplayServer;
  let folder: string;
  const cfg = () => vscode.workspace.getConfiguration('quarry');
  const store = () => join(folder, '.quarry', 'trajectories', 'asked.jsonl');

  suiteSetup(async () => {
    server = await startReplayServer({
      script: [
        { match: FOLLOW_Q, turn: 0, response: `<solution>${FOLLOW_SQL}</solution>` },
        {
          match: CITY_Q,
          turn: 0,
          response: '<think>Look at the cities.</think>\n<sql>SELECT DISTINCT city FROM patient</sql>',
        },
        { match: CITY_Q, turn: 1, response: `<think>Group them.</think>\n<solution>${CITY_SQL}</solution>` },
        {
          match: TREES_Q,
          turn: 0,
          response: '<think>Count.</think>\n<solution>SELECT count(*) AS trees FROM tree</solution>',
        },
        { match: SLOW_Q, response: 'never sent' },
      ],
    });
    const ext = vscode.extensions.getExtension('quarry.quarry');
    assert.ok(ext);
    await ext.activate();
    folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    await cfg().update('model.backend', 'openai', vscode.ConfigurationTarget.Workspace);
    await cfg().update('model.baseUrl', server.url, vscode.ConfigurationTarget.Workspace);
    await cfg().update('model.name', 'replay', vscode.ConfigurationTarget.Workspace);
    await cfg().update('agent.protocol', 'skyrl', vscode.ConfigurationTarget.Workspace);
  });

  suiteTeardown(async () => {
    for (const k of ['model.backend', 'model.baseUrl', 'model.name', 'agent.protocol']) {
      await cfg().update(k, undefined, vscode.ConfigurationTarget.Workspace);
    }
    await server?.close();
  });

  let first: QuarryChatMetadata;

  test(
    'a question naming a workspace database: progress, the turns, the final SQL, a result table, buttons, a ' +
      'saved trajectory',
    async () => {
      const run = await chat({ prompt: CITY_Q });
      const md = markdown(run);
      assert.equal(run.result.errorDetails, undefined, JSON.stringify(run.result));
      assert.ok(
        progress(run).some((p) => p.includes('Reading data/clinic.sqlite')),
        progress(run).join(' | '),
      );
      assert.ok(progress(run).includes('Turn 1 of 5: thinking…'));
      assert.ok(progress(run).some((p) => p.startsWith('Turn 1: running SELECT DISTINCT city')));
      assert.match(md, /\*\*data\/clinic\.sqlite\*\* · skyrl · openai:/);
      assert.match(md, /1\. runs `SELECT DISTINCT city FROM patient` → 5 rows\n2\. answers\n/);
      assert.match(md, /Answered in 2 turns/);
      assert.ok(md.includes('```sql\n' + CITY_SQL + '\n```\n'), md);
      assert.ok(md.includes('| city | patients |\n| --- | --- |\n| Brno | 1 |\n| Leipzig | 1 |'), md);
      assert.match(md, /\*5 rows\.\*/);

      const meta = run.result.metadata as QuarryChatMetadata;
      assert.equal(meta.quarry.db, join(folder, 'data', 'clinic.sqlite'));
      assert.equal(meta.quarry.sql, CITY_SQL);
      assert.equal(meta.quarry.result, "[('Brno', 1), ('Leipzig', 1), ('Lyon', 1), ('Osaka', 1), ('Porto', 1)]");
      assert.equal(meta.quarry.trajectoryPath, store());
      const [replay, again] = buttons(run);
      assert.deepEqual(
        [replay.command, replay.arguments],
        ['quarry.openReplay', [{ file: store(), id: meta.quarry.trajectoryId }]],
      );
      assert.deepEqual([again.command, again.arguments], ['quarry.ask', [{ db: meta.quarry.db, question: CITY_Q }]]);
      const { records } = await readTrajectories(store());
      const rec = records.find((r) => r.id === meta.quarry.trajectoryId);
      assert.ok(rec, 'saved to the store for the replay button');
      assert.deepEqual([rec.end, rec.finalSql, rec.meta.source], ['answer', CITY_SQL, 'editor-chat']);
      first = meta;

      // The button works: the replay view opens on that very trajectory.
      await vscode.commands.executeCommand(replay.command, ...replay.arguments);
      for (let i = 0; ; i++) {
        const posted = await vscode.commands.executeCommand<unknown[]>('quarry.replay.testHook', 'posted');
        if (JSON.stringify(posted).includes(meta.quarry.trajectoryId)) break;
        assert.ok(i < 100, 'the replay panel was given the trajectory');
        await new Promise((r) => setTimeout(r, 100));
      }
      await vscode.commands.executeCommand('quarry.replay.testHook', 'close');
    },
  );

  test('a follow-up in the same chat keeps skyrl; its prompt has the earlier question, SQL and result', async () => {
    const before = server.requests.length;
    const run = await chat({ prompt: FOLLOW_Q, history: [{ question: CITY_Q, metadata: first }] });
    const md = markdown(run);
    assert.match(md, /· skyrl \(follow-up 2\) ·/);
    const sent = JSON.stringify(server.requests.slice(before).map((r) => r.body?.messages));
    assert.ok(sent.includes(`Earlier in this conversation:\\n1. Question: ${CITY_Q}`), sent);
    assert.ok(sent.includes(`Result: ${first.quarry.result}`), sent);
    assert.ok(md.includes('| Porto | 1 |'), md);
    assert.ok(!md.includes('| Brno |'), 'born before 1980 leaves only Porto');
    const meta = run.result.metadata as QuarryChatMetadata;
    const { records } = await readTrajectories(store());
    const rec = records.find((r) => r.id === meta.quarry.trajectoryId);
    assert.deepEqual(rec?.task.history, [{ question: CITY_Q, sql: CITY_SQL, result: first.quarry.result }]);
  });

  test('a #file reference picks the database even when the prompt names none', async () => {
    const orchard = join(folder, 'data', 'orchard.sqlite');
    const run = await chat({ prompt: TREES_Q, references: [orchard] });
    const meta = run.result.metadata as QuarryChatMetadata;
    assert.equal(meta.quarry.db, orchard);
    assert.match(markdown(run), /\*\*data\/orchard\.sqlite\*\*/);
    assert.match(markdown(run), /\| trees \|/);
  });

  test('cancelling the chat request while the model works stops the episode and aborts the model request', async () => {
    server.hangNext(1);
    const before = server.requests.length;
    const running = chat({ prompt: `${SLOW_Q} in clinic.sqlite` });
    for (
      let i = 0;
      !server.requests.slice(before).some((r) => JSON.stringify(r.body?.messages ?? '').includes(SLOW_Q));
      i++
    ) {
      assert.ok(i < 300, 'the model request arrived');
      await new Promise((r) => setTimeout(r, 100));
    }
    await chat({ prompt: '', cancel: true });
    const run = await running;
    assert.match(markdown(run), /Stopped after 0 turns\./);
    const reqs = server.requests.filter((r) => r.body !== null);
    assert.equal(reqs[reqs.length - 1].clientClosed, true, 'the HTTP request was aborted');
  });

  test('cancelled as soon as the first turn starts: no model request is sent at all', async () => {
    const before = server.requests.length;
    const run = await chat({ prompt: `${SLOW_Q} in clinic.sqlite`, cancelOnProgress: 'Turn 1 of' });
    assert.match(markdown(run), /Stopped after 0 turns\./);
    assert.equal(server.requests.length, before, 'the model was not asked');
  });
});
