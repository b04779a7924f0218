// Tests of trajectories/trajectories: records from the loop are valid and survive the writer and reader unchanged;
// the validator names the field of a broken record and says what it expected
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync, writeFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode } from '../../../src/core/agent/loop';
import { SchemaCache } from '../../../src/core/agent/env';
import {
  TrajectoryWriter,
  readTrajectories,
  iterateTrajectories,
  validateTrajectory,
  TrajectoryFormatError,
  dbSha256,
  type TrajectoryRecord,
} from '../../../src/core/trajectories';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { scriptedModel, tagProtocol } from '../agent/envSupport';

const db = buildDb('bookshop');
const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());

let answered: TrajectoryRecord;
let failed: TrajectoryRecord;

before(async () => {
  const task = {
    id: 'bookshop:1',
    question: 'How many books?',
    dbPath: db,
    history: [
      { question: 'Authors?', sql: 'SELECT name FROM author' },
      { question: 'And books?', sql: 'SELECT count(*) FROM book', result: '[(12,)]' },
    ],
  };
  answered = await runEpisode({
    task,
    protocol: tagProtocol,
    pool,
    schemaCache: new SchemaCache(),
    sampling: { temperature: 0.7, seed: 3 },
    model: scriptedModel([
      '<sql>SELECT count(*) FROM book</sql>',
      'bad turn',
      '<solution>SELECT count(*) FROM book</solution>',
    ]),
  });
  failed = await runEpisode({
    task,
    protocol: tagProtocol,
    pool,
    model: scriptedModel([]),
    groupId: answered.groupId,
    sample: 1,
  });
});

const clone = (r: TrajectoryRecord): Record<string, unknown> =>
  JSON.parse(JSON.stringify(r)) as Record<string, unknown>;

test('records from the loop are valid and survive the writer and reader unchanged', async () => {
  assert.equal(validateTrajectory(answered), null);
  assert.equal(validateTrajectory(failed), null);
  assert.equal(failed.end, 'error');
  assert.deepEqual(answered.task.history, [
    { question: 'Authors?', sql: 'SELECT name FROM author' },
    { question: 'And books?', sql: 'SELECT count(*) FROM book', result: '[(12,)]' },
  ]);
  const file = join(tempDir(), 'traj.jsonl');
  const w = await TrajectoryWriter.open(file);
  await Promise.all([w.write(answered), w.write(failed)]);
  assert.equal(w.count, 2);
  await w.close();
  const text = readFileSync(file, 'utf8');
  assert.equal(text.split('\n').length, 3, 'one line per record and a final newline');
  const back = await readTrajectories(file);
  assert.deepEqual(back.records, [clone(answered), clone(failed)]);
  assert.deepEqual([back.invalid, back.truncated], [[], null]);
  // Appending keeps what is there.
  const w2 = await TrajectoryWriter.open(file);
  await w2.write(answered);
  await w2.close();
  const lines: number[] = [];
  for await (const { line, record } of iterateTrajectories(file)) {
    lines.push(line);
    assert.equal(record.schema, 'quarry.trajectory/1');
  }
  assert.deepEqual(lines, [1, 2, 3]);
  // append: false starts afresh.
  const w3 = await TrajectoryWriter.open(file, { append: false });
  await w3.write(failed);
  await w3.close();
  assert.equal((await readTrajectories(file)).records.length, 1);
});

/** Breaks a copy of a valid record and returns the validator's verdict (`any`: the edits reach deep on purpose). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function broken(edit: (r: any) => void): { field: string; message: string } | null {
  const r = clone(answered);
  edit(r);
  return validateTrajectory(r);
}

test('the validator names the field of a broken record and says what it expected', () => {
  assert.deepEqual(
    broken((r) => {
      delete r.task.db.sha256;
    }),
    { field: 'task.db.sha256', message: 'expected 64 lowercase hex digits, got nothing (the field is missing)' },
  );
  assert.deepEqual(
    broken((r) => {
      r.turns[0].exec.rowCount = -1;
    }),
    { field: 'turns[0].exec.rowCount', message: 'expected a non-negative integer, got -1' },
  );
  assert.deepEqual(
    broken((r) => {
      r.turns[2].index = 5;
    }),
    { field: 'turns[2].index', message: 'expected 2 (turns are numbered from 0 in order), got 5' },
  );
  assert.deepEqual(
    broken((r) => {
      r.schema = 'quarry.trajectory/2';
    }),
    {
      field: 'schema',
      message: 'expected "quarry.trajectory/1" (this reader does not know that version), got "quarry.trajectory/2"',
    },
  );
  assert.deepEqual(
    broken((r) => {
      r.end = 'done';
    }),
    { field: 'end', message: 'expected one of answer, budget, invalid, error, cancelled, got "done"' },
  );
  assert.deepEqual(
    broken((r) => {
      r.end = 'error';
    }),
    { field: 'error', message: "expected the failure in words when end is 'error', got null" },
  );
  assert.deepEqual(
    broken((r) => {
      r.turns[0].action.sql = null;
    }),
    { field: 'turns[0].action.sql', message: "expected the SQL of a 'execute' action, got null" },
  );
  assert.deepEqual(
    broken((r) => {
      r.prompt[1].role = 'bot';
    }),
    { field: 'prompt[1].role', message: 'expected one of system, user, assistant, tool, got "bot"' },
  );
  assert.deepEqual(
    broken((r) => {
      r.task.history[1].result = 12;
    }),
    { field: 'task.history[1].result', message: 'expected a string, got 12' },
  );
  assert.deepEqual(
    broken((r) => {
      r.task.history[0].sql = 7;
    }),
    { field: 'task.history[0].sql', message: 'expected a string, got 7' },
  );
  assert.deepEqual(
    broken((r) => {
      r.model.sampling.temperature = -1;
    }),
    { field: 'model.sampling.temperature', message: 'expected a non-negative number, got -1' },
  );
  assert.deepEqual(
    broken((r) => {
      r.turns[1].action.mdp = ['THINK'];
    }),
    {
      field: 'turns[1].action.mdp[0]',
      message: 'expected one of PROPOSE, EXECUTE, E-VERIFY, M-VERIFY, SELF-CORRECT, FINALIZE, got "THINK"',
    },
  );
  assert.deepEqual(
    broken((r) => {
      r.turns[0].exec.ok = false;
    }),
    { field: 'turns[0].exec.errorClass', message: 'expected an error class when ok is false, got null' },
  );
  assert.deepEqual(
    broken((r) => {
      r.protocol.config = { thinking: true };
    }),
    { field: 'protocol.config.maxTurns', message: 'expected a positive integer, got nothing (the field is missing)' },
  );
  assert.deepEqual(
    broken((r) => {
      r.turns[0].usageEstimated = 'yes';
    }),
    { field: 'turns[0].usageEstimated', message: 'expected true or false, got "yes"' },
  );
  assert.deepEqual(
    broken((r) => {
      r.timings = null;
    }),
    { field: 'timings', message: 'expected an object, got null' },
  );
  assert.deepEqual(validateTrajectory([1, 2]), { field: '', message: 'expected an object, got [1,2]' });
  // Extra fields are additive and stay valid.
  assert.equal(
    broken((r) => {
      r.turns[0].rewardTerms = { exec: 1 };
      r.labels = [];
    }),
    null,
  );
});

test('the writer refuses an invalid record, naming the field, and writes nothing', async () => {
  const file = join(tempDir(), 'w.jsonl');
  const w = await TrajectoryWriter.open(file);
  const bad = { ...clone(answered), sample: 1.5 } as unknown as TrajectoryRecord;
  await assert.rejects(
    w.write(bad),
    (err: Error) =>
      err instanceof TrajectoryFormatError &&
      err.field === 'sample' &&
      err.message === 'field sample: expected a non-negative integer, got 1.5',
  );
  await w.write(answered);
  await w.close();
  await assert.rejects(w.write(answered), /closed/);
  assert.equal(readFileSync(file, 'utf8').split('\n').length, 2);
});

test('the reader names the line and field of a bad record; collect mode lists every bad line', async () => {
  const file = join(tempDir(), 'r.jsonl');
  const bad = clone(answered);
  (bad.task as { question: unknown }).question = null;
  writeFileSync(
    file,
    [JSON.stringify(answered), '', JSON.stringify(bad), '{oops', JSON.stringify(failed)].join('\r\n') + '\r\n',
  );
  await assert.rejects(
    readTrajectories(file),
    (err: Error) =>
      err instanceof TrajectoryFormatError &&
      err.line === 3 &&
      err.field === 'task.question' &&
      err.message === `${file}, line 3: field task.question: expected a string, got null`,
  );
  const all = await readTrajectories(file, { onInvalid: 'collect' });
  assert.equal(all.records.length, 2);
  assert.deepEqual(
    all.invalid.map((e) => [e.line, e.field]),
    [
      [3, 'task.question'],
      [4, null],
    ],
  );
  assert.match(all.invalid[1].message, /, line 4: not valid JSON/);
  await assert.rejects(async () => {
    for await (const x of iterateTrajectories(file)) void x;
  }, /line 3: field task\.question/);
});

test('a truncated last line is reported, not fatal, and the next writer cuts it before appending', async () => {
  const file = join(tempDir(), 't.jsonl');
  const full = JSON.stringify(answered);
  writeFileSync(file, full + '\n' + full.slice(0, 100));
  const r = await readTrajectories(file);
  assert.equal(r.records.length, 1);
  assert.deepEqual(r.truncated, { line: 2, chars: 100 });
  const w = await TrajectoryWriter.open(file);
  assert.equal(w.repairedBytes, 100);
  await w.write(failed);
  await w.close();
  const again = await readTrajectories(file);
  assert.deepEqual([again.records.length, again.truncated], [2, null]);

  // A complete last record that only lacks its newline is kept; a file that is not ours is not cut.
  const noNl = join(tempDir(), 'n.jsonl');
  writeFileSync(noNl, full);
  const w2 = await TrajectoryWriter.open(noNl);
  assert.equal(w2.repairedBytes, 0);
  await w2.write(failed);
  await w2.close();
  assert.equal((await readTrajectories(noNl)).records.length, 2);
  const notes = join(tempDir(), 'notes.txt');
  writeFileSync(notes, 'my notes, no newline');
  await assert.rejects(TrajectoryWriter.open(notes), /not a trajectory record; refusing to append/);
  assert.equal(readFileSync(notes, 'utf8'), 'my notes, no newline');
});

test('a writer process killed with SIGKILL leaves only whole records, at most the one in flight lost', async () => {
  const killedDir = tempDir();
  const file = join(killedDir, 'killed.jsonl');
  const recordPath = join(tempDir(), 'record.json');
  writeFileSync(recordPath, JSON.stringify(answered));
  const writerModule = join(__dirname, '..', '..', '..', 'src', 'core', 'trajectories', 'index.js');
  const script = `
    const { TrajectoryWriter } = require(${JSON.stringify(writerModule)});
    const rec = JSON.parse(require('fs').readFileSync(${JSON.stringify(recordPath)}, 'utf8'));
    (async () => {
      const w = await TrajectoryWriter.open(${JSON.stringify(file)});
      for (let i = 0; ; i++) {
        await w.write({ ...rec, id: 'r' + i, meta: { i, pad: 'x'.repeat(i % 5000) } });
        if (i === 50) process.stdout.write('ready\\n');
      }
    })();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const r = await readTrajectories(file);
  assert.ok(r.records.length > 50);
  assert.deepEqual(
    r.records.map((x) => x.meta.i),
    r.records.map((_, i) => i),
    'every record before the kill is there, in order',
  );
  if (r.truncated) assert.equal(r.truncated.line, r.records.length + 1);
  const w = await TrajectoryWriter.open(file);
  assert.equal(w.repairedBytes, r.truncated?.chars ?? 0);
  await w.close();
  assert.deepEqual(
    readdirSync(killedDir),
    ['killed.jsonl'],
    'the next writer takes over the lock and clears what the killed one left',
  );
});

test(
  'a lock file with no pid in it (killed mid-write by an older writer) is taken over once it is a few ' + 'seconds old',
  async () => {
    const dir = tempDir();
    const file = join(dir, 'stale.jsonl');
    writeFileSync(`${file}.lock`, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    const w = await TrajectoryWriter.open(file);
    await w.write(answered);
    await w.close();
    assert.equal((await readTrajectories(file)).records.length, 1);
    assert.deepEqual(readdirSync(dir), ['stale.jsonl']);
  },
);

test('dbSha256 hashes the file and notices when it changes', async () => {
  const dir = tempDir();
  const path = buildDb('spider-concert', { dir });
  const expected = createHash('sha256').update(readFileSync(path)).digest('hex');
  assert.equal(await dbSha256(path), expected);
  appendFileSync(path, Buffer.alloc(4096));
  utimesSync(path, new Date(), new Date(Date.now() + 5000));
  const changed = await dbSha256(path);
  assert.notEqual(changed, expected);
  assert.equal(changed, createHash('sha256').update(readFileSync(path)).digest('hex'));
  await assert.rejects(dbSha256(join(dir, 'missing.sqlite')), /ENOENT/);
});

test(
  'issue 9, item 8: a byte-order mark is tolerated, a ' + 'directory is named, and a line of several MB spans chunks',
  async () => {
    const dir = tempDir();
    const bom = join(dir, 'bom.jsonl');
    writeFileSync(bom, '\ufeff' + JSON.stringify(answered) + '\n' + JSON.stringify(failed) + '\n');
    const read = await readTrajectories(bom);
    assert.deepEqual(
      read.records.map((r) => r.id),
      [answered.id, failed.id],
    );
    await assert.rejects(
      readTrajectories(dir),
      (err: Error) => err.message === `${dir} is a directory, not a trajectory file (JSONL): name a file inside it`,
    );
    // A record whose line is about 5 MB (a long model turn), between two ordinary ones: read whole, in order.
    const big = clone(answered);
    (big.turns as { assistant: string }[])[0].assistant = 'x'.repeat(5 * 2 ** 20);
    big.id = 'big';
    const file = join(dir, 'big.jsonl');
    writeFileSync(file, [answered, big, failed].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const all = await readTrajectories(file);
    assert.deepEqual(
      all.records.map((r) => r.id),
      [answered.id, 'big', failed.id],
    );
    assert.equal(all.records[1].turns[0].assistant.length, 5 * 2 ** 20);
  },
);

test(
  'issue 9, item 9: three processes appending 5 MB records to one file at once (a writer per record) all ' +
    'land, whole',
  async () => {
    const dir = tempDir();
    const file = join(dir, 'shared.jsonl');
    const template = join(dir, 'record.json');
    writeFileSync(template, JSON.stringify(answered));
    const writerModule = join(__dirname, '..', '..', '..', 'src', 'core', 'trajectories', 'writer.js');
    const script = `
    const { TrajectoryWriter } = require(${JSON.stringify(writerModule)});
    const rec = JSON.parse(require('fs').readFileSync(${JSON.stringify(template)}, 'utf8'));
    (async () => {
      // As the CLI and the editor do: a writer opened per saved episode, records of several MB.
      for (let i = 0; i < 12; i++) {
        const w = await TrajectoryWriter.open(${JSON.stringify(file)});
        rec.id = process.argv[1] + '-' + i;
        rec.turns[0].assistant = process.argv[1].repeat(5 << 20);
        await w.write(rec);
        await w.close();
      }
    })().catch((e) => { console.error(e); process.exit(1); });`;
    const codes = await Promise.all(
      ['a', 'b', 'c'].map(
        (tag) =>
          new Promise<number | null>((res) => {
            spawn(process.execPath, ['-e', script, tag], { stdio: 'inherit' }).on('exit', res);
          }),
      ),
    );
    assert.deepEqual(codes, [0, 0, 0]);
    const read = await readTrajectories(file);
    assert.equal(read.truncated, null);
    assert.equal(read.records.length, 36);
    for (const tag of ['a', 'b', 'c']) {
      const mine = read.records.filter((r) => r.id.startsWith(`${tag}-`));
      assert.deepEqual(
        mine.map((r) => r.id),
        Array.from({ length: 12 }, (_, i) => `${tag}-${i}`),
      );
      assert.ok(mine.every((r) => r.turns[0].assistant === tag.repeat(5 << 20)));
    }
    assert.equal(readFileSync(file).includes(0), false, 'no NUL bytes');
  },
);
