// `quarry ask` end to end against a real OpenAI-compatible replay server on 127.0.0.1, through the openai backend.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readdirSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { main } from '../../src/cli/main';
import { readTrajectories } from '../../src/core/trajectories';
import { startReplayServer, type ReplayEntry } from '../support/openaiReplayServer';
import { buildDb, tempDir } from '../helpers/fixtures';
import { capture } from './captureStream';

const db = buildDb('bookshop');
const names = (() => {
  const h = new Database(db, { readonly: true });
  try {
    return h.prepare('SELECT name FROM author ORDER BY name LIMIT 3').pluck().all() as string[];
  } finally {
    h.close();
  }
})();

// The CLI's working directory is the workspace its trajectories are saved in by default: a fresh one per test file.
const workspace = tempDir();

async function ask(...argv: string[]) {
  return askIn(workspace, ...argv);
}

async function askIn(cwd: string, ...argv: string[]) {
  const out = capture();
  const err = capture();
  const code = await main(['ask', ...argv], { stdout: out.stream, stderr: err.stream, cwd });
  return { code, out: out.text(), err: err.text() };
}

const servers: { close(): Promise<void> }[] = [];
after(() => Promise.all(servers.map((s) => s.close())));
async function server(
  entries: ReplayEntry[],
  opts: { chunkDelayMs?: number; apiKey?: string; streamUsage?: boolean } = {},
) {
  const s = await startReplayServer({ script: entries, ...opts });
  servers.push(s);
  return s;
}

test('quarry ask: streams the turns, runs the final SQL as a table, writes the trajectory; exit 0', async () => {
  const s = await server([
    { turn: 0, response: '<think>How many authors first.</think>\n<sql>SELECT count(*) AS n FROM author</sql>' },
    {
      turn: 1,
      response: '<think>Now the names.</think>\n<solution>SELECT name FROM author ORDER BY name LIMIT 3</solution>',
    },
  ]);
  const traj = join(tempDir(), 'ask.jsonl');
  const r = await ask(
    '--db',
    db,
    '--model',
    s.spec(),
    '--trajectory',
    traj,
    '--temperature',
    '0',
    'Who are the first three authors by name?',
  );
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.out,
    new RegExp(
      /── turn 1 of 5 ──\n<think>How many authors first\.<\/think>\n<sql>SELECT count\(\*\) AS n FR/.source +
        /OM author<\/sql>\n▶ running: SELECT count\(\*\) AS n FROM author\n {2}1 row in [\d.]+ ms\n<o/.source +
        /bservation>/.source,
    ),
  );
  assert.match(
    r.out,
    /<reminder>You have 4 turns left to complete the task\.<\/reminder><\/observation>\n\n── turn 2 of 5 ──\n/,
  );
  const [, result] = r.out.split('── final SQL ──\nSELECT name FROM author ORDER BY name LIMIT 3\n\n── result ──\n');
  assert.ok(result, r.out);
  for (const n of names) assert.ok(result.includes(`| ${n}`), `result table lists ${n}:\n${result}`);
  assert.match(r.err, /^quarry ask: skyrl, up to 5 turns\n/);
  assert.match(r.err, /trajectory appended to .*ask\.jsonl\nanswer after 2 turns in /);

  const { records } = await readTrajectories(traj);
  assert.equal(records.length, 1);
  const rec = records[0];
  assert.deepEqual(
    [rec.end, rec.finalSql, rec.model.spec, rec.model.sampling, rec.protocol.name],
    ['answer', 'SELECT name FROM author ORDER BY name LIMIT 3', s.spec(), { temperature: 0 }, 'skyrl'],
  );
  assert.equal(
    rec.turns[0].assistant,
    '<think>How many authors first.</think>\n<sql>SELECT count(*) AS n FROM author</sql>',
    'stop string restored',
  );
  assert.equal(rec.task.question, 'Who are the first three authors by name?');
  assert.equal(rec.turns[0].usageEstimated, undefined, 'the server reported usage');
  assert.ok(rec.usage.completionTokens > 0);
  // What went over the wire: the protocol's stop strings and the asked-for temperature, the whole chat each time.
  const chats = s.requests.filter((q) => q.body !== null);
  assert.equal(chats.length, 2);
  assert.deepEqual([chats[0].body?.stop, chats[0].body?.temperature], [['</sql>', '</solution>'], 0]);
  assert.equal((chats[1].body!.messages as unknown[]).length, 3);
});

test('quarry ask --protocol sqltrail --max-turns 1: the final call answers after the budget', async () => {
  const s = await server([
    { turn: 0, response: '<reasoning>look</reasoning><sql>SELECT count(*) FROM book</sql>' },
    { turn: 1, response: '<reasoning>answer</reasoning><solution>SELECT count(*) AS books FROM book</solution>' },
  ]);
  const traj = join(tempDir(), 'st.jsonl');
  const r = await ask(
    '--db',
    db,
    '--model',
    s.spec(),
    '--protocol',
    'sqltrail',
    '--max-turns',
    '1',
    '--trajectory',
    traj,
    'How many books?',
  );
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /── turn 2 · turns used up, final answer ──/);
  assert.match(r.out, /\| books \|/);
  const rec = (await readTrajectories(traj)).records[0];
  assert.deepEqual([rec.protocol.name, rec.protocol.budget, rec.turns.length, rec.end], ['sqltrail', 1, 2, 'answer']);
});

test('quarry ask exit 1: no answer within the budget, a final SQL that fails, a model error', async () => {
  const noAnswer = await server([{ response: '<sql>SELECT 1</sql>' }]);
  const spent = await ask('--db', db, '--model', noAnswer.spec(), '--max-turns', '2', 'q?');
  assert.equal(spent.code, 1);
  assert.match(spent.err, /quarry ask: no answer within 2 turns\n$/);
  assert.doesNotMatch(spent.out, /final SQL/);

  const broken = await server([{ response: '<solution>SELECT nope FROM author</solution>' }]);
  const bad = await ask('--db', db, '--model', broken.spec(), 'q?');
  assert.equal(bad.code, 1);
  assert.match(bad.out, /── result ──\nno such column: nope\n$/);
  assert.match(bad.err, /the final SQL failed \(sql\): no such column: nope/);

  const locked = await server([{ response: '<solution>SELECT 1</solution>' }], { apiKey: 'secret' });
  const traj = join(tempDir(), 'err.jsonl');
  const denied = await ask('--db', db, '--model', locked.spec(), '--trajectory', traj, 'q?');
  assert.equal(denied.code, 1);
  assert.match(denied.err, /quarry ask: model error \(auth\): /);
  const rec = (await readTrajectories(traj)).records[0];
  assert.deepEqual([rec.end, rec.turns.length], ['error', 0]);
  assert.match(rec.error ?? '', /^model error \(auth\)/);
});

test(
  'quarry ask saves every episode to the workspace store ' + 'by default, as the editor does; --no-save turns it off',
  async () => {
    const s = await server([
      { turn: 0, response: '<think>count</think>\n<solution>SELECT count(*) FROM author</solution>' },
      { turn: 0, response: '<think>count</think>\n<solution>SELECT count(*) FROM author</solution>' },
    ]);
    const dir = tempDir();
    const saved = await askIn(dir, '--db', db, '--model', s.spec(), 'How many authors?');
    assert.equal(saved.code, 0, saved.err);
    const store = join(dir, '.quarry', 'trajectories', 'asked.jsonl');
    assert.match(saved.err, /trajectory appended to .*\.quarry\/trajectories\/asked\.jsonl\n/);
    const { records } = await readTrajectories(store);
    assert.deepEqual(
      records.map((r) => [r.end, r.finalSql, r.meta.source]),
      [['answer', 'SELECT count(*) FROM author', 'cli-ask']],
    );
    const other = tempDir();
    const unsaved = await askIn(other, '--db', db, '--model', s.spec(), '--no-save', 'How many authors?');
    assert.equal(unsaved.code, 0, unsaved.err);
    assert.doesNotMatch(unsaved.err, /trajectory appended/);
    assert.deepEqual(readdirSync(other), [], '--no-save writes nothing');
    const both = await askIn(
      other,
      '--db',
      db,
      '--model',
      s.spec(),
      '--no-save',
      '--trajectory',
      join(other, 't.jsonl'),
      'q?',
    );
    assert.equal(both.code, 2);
    assert.match(both.err, /--trajectory and --no-save contradict each other/);
  },
);

test(
  'quarry ask: a server that reports no usage gives ' + 'estimated counts, marked as such in the trajectory',
  async () => {
    const s = await server([{ response: '<solution>SELECT count(*) FROM author</solution>' }], { streamUsage: false });
    const traj = join(tempDir(), 'est.jsonl');
    const r = await ask('--db', db, '--model', s.spec(), '--trajectory', traj, 'How many authors?');
    assert.equal(r.code, 0, r.err);
    const rec = (await readTrajectories(traj)).records[0];
    assert.equal(rec.turns[0].usageEstimated, true);
    assert.ok(rec.turns[0].usage.promptTokens > 0);
  },
);

test('quarry ask --timeout-ms: a model call that never answers ends the episode, exit 1', async () => {
  const s = await server([{ response: '<solution>SELECT 1</solution>' }]);
  s.hangNext(1);
  const r = await ask('--db', db, '--model', s.spec(), '--timeout-ms', '300', 'q?');
  assert.equal(r.code, 1);
  assert.match(r.err, /quarry ask: model error \(timeout\)/);
});

test('quarry ask exit 2: bad database, bad model spec, unknown protocol, bad options, no question', async () => {
  const s = await server([{ response: '<solution>SELECT 1</solution>' }]);
  const notDb = join(tempDir(), 'notes.sqlite');
  writeFileSync(notDb, 'plain text');
  const cases: [string[], RegExp][] = [
    [['--db', join(tempDir(), 'missing.sqlite'), '--model', s.spec(), 'q?'], /missing\.sqlite/],
    [['--db', notDb, '--model', s.spec(), 'q?'], /not a SQLite database/],
    [['--db', db, '--model', 'gpt-4o', 'q?'], /bad model spec "gpt-4o": it has no backend prefix/],
    [
      ['--db', db, '--model', s.spec(), '--protocol', 'chatty', 'q?'],
      /unknown protocol 'chatty'; quarry ask supports skyrl, sqltrail, mtir, mtsqlr1/,
    ],
    [['--db', db, '--model', s.spec(), '--protocol', 'progress', 'q?'], /progress needs gold-SQL feedback/],
    [['--db', db, '--model', s.spec(), '--max-turns', '0', 'q?'], /--max-turns must be a positive integer, got '0'/],
    [['--db', db, '--model', s.spec(), '--temperature=-1', 'q?'], /--temperature must be a number >= 0, got '-1'/],
    [['--db', db, '--model', s.spec(), '--temperature', 'hot', 'q?'], /--temperature must be a number >= 0, got 'hot'/],
    [['--db', db, '--model', s.spec(), '--timeout-ms', 'soon', 'q?'], /--timeout-ms must be a positive integer/],
    [['--db', db, '--model', s.spec()], /the question is required/],
    [['--db', db, '--model', s.spec(), 'two', 'questions'], /give the question as one argument \(quote it\); got 2/],
    [['--model', s.spec(), 'q?'], /--db FILE is required/],
    [['--db', db, 'q?'], /--model SPEC is required/],
    [
      ['--db', db, '--model', s.spec(), '--trajectory', join(tempDir(), 'no', 'such', 'dir.jsonl'), 'q?'],
      /cannot write the trajectory/,
    ],
    [['--db', db, '--model', s.spec(), '--max-rows', '3', 'q?'], /Unknown option '--max-rows'/],
  ];
  for (const [argv, message] of cases) {
    const r = await ask(...argv);
    assert.equal(r.code, 2, `${argv.join(' ')} -> ${r.code}: ${r.err}`);
    assert.match(r.err, message);
  }
  assert.equal(s.requests.filter((q) => q.body !== null).length, 0, 'bad input never reaches the model');
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  test(`${signal} cancels the episode mid-generation, writes the trajectory and exits 1`, async () => {
    // Slow streaming gives the second turn time to be interrupted while it is being generated.
    const s = await server(
      [
        { turn: 0, response: '<sql>SELECT count(*) FROM author</sql>' },
        { turn: 1, response: `<think>${'word '.repeat(400)}</think><solution>SELECT 1</solution>` },
      ],
      { chunkDelayMs: 25 },
    );
    const traj = join(tempDir(), 'cancel.jsonl');
    const cli = join(__dirname, '..', '..', 'src', 'cli', 'run.js');
    const child = spawn(process.execPath, [cli, 'ask', '--db', db, '--model', s.spec(), '--trajectory', traj, 'q?'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: workspace,
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += String(c);
    });
    child.stdout.on('data', (c: Buffer) => {
      out += String(c);
      if (/── turn 2 of 5 ──\n<think>word word/.test(out) && !child.killed) child.kill(signal);
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    assert.equal(code, 1, err);
    assert.match(err, /cancelling/);
    assert.match(err, /quarry ask: cancelled\n$/);
    const { records, truncated } = await readTrajectories(traj);
    assert.equal(truncated, null);
    assert.equal(records.length, 1);
    assert.deepEqual([records[0].end, records[0].turns.length, records[0].turns[0].exec?.ok], ['cancelled', 1, true]);
  });

test('Ctrl-C while the final SQL runs stops it and exits 1', async () => {
  const runaway = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
  const s = await server([{ response: `<solution>${runaway}</solution>` }]);
  const cli = join(__dirname, '..', '..', 'src', 'cli', 'run.js');
  const child = spawn(process.execPath, [cli, 'ask', '--db', db, '--model', s.spec(), 'q?'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: workspace,
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => {
    err += String(c);
  });
  child.stdout.on('data', (c: Buffer) => {
    out += String(c);
    if (out.includes('── result ──') && !child.killed) child.kill('SIGINT');
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  assert.equal(code, 1, err);
  assert.match(err, /quarry ask: cancelled while running the final SQL\n$/);
  assert.doesNotMatch(out, /timed out/);
});
