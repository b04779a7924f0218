// The exporters on trajectories from real agent episodes (the core loop, the sandbox pool, a fixture database; the
// model is a scripted stand-in): loss flags, which trajectories qualify, the corrected-SQL substitution read back by
// each protocol's own parser, RL prompts and the files written.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode } from '../../../src/core/agent/loop';
import { SchemaCache } from '../../../src/core/agent/env';
import { getProtocol, PROTOCOL_NAMES } from '../../../src/core/agent/protocols';
import { introspectSchema } from '../../../src/core/db/schema/introspect';
import type { ProtocolName } from '../../../src/core/agent/types';
import type { TrajectoryRecord } from '../../../src/core/trajectories/types';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { scriptedModel } from '../agent/envSupport';
import { toSftExample } from '../../../src/core/labels/sft';
import { toRlPrompts } from '../../../src/core/labels/rl';
import { answerBlock, rewriteAnswerTurn } from '../../../src/core/labels/answerFormat';
import { exportRlPrompts, exportSft, readLabeledRecords } from '../../../src/core/labels/exportJsonl';
import { recordSha } from '../../../src/core/labels/recordSha';
import { checkCorrectedSql } from '../../../src/core/labels/checkSql';
import { LabelStore } from '../../../src/core/labels/store';
import { quarryPath } from '../../../src/core/workspace/quarryLayout';
import type { Label } from '../../../src/core/labels/types';
import { TrajectoryWriter } from '../../../src/core/trajectories/writer';
import { readTrajectories } from '../../../src/core/trajectories/reader';
import { main } from '../../../src/cli/main';
import { capture } from '../captureStream';

const db = buildDb('bookshop');
const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const schemaCache = new SchemaCache();
const Q = 'How many authors are there?';
const GOLD = 'SELECT count(*) FROM author';

function labelFor(r: TrajectoryRecord, over: Partial<Label> = {}): Label {
  return {
    trajectoryId: r.id,
    file: '/w/t.jsonl',
    recordSha: recordSha(r),
    verdict: 'correct',
    correctedSql: null,
    tags: [],
    note: '',
    labeler: 'ana',
    updatedAt: '2026-11-23T10:00:00.000Z',
    ...over,
  };
}

async function answered(id = 'ans'): Promise<TrajectoryRecord> {
  return runEpisode({
    id,
    task: { id: 'bk:1', question: Q, dbPath: db, gold: GOLD, difficulty: 'easy' },
    protocolName: 'skyrl',
    pool,
    schemaCache,
    model: scriptedModel([
      '<think>look at authors</think>\n<sql>SELECT name FROM author</sql>',
      '<think>now count</think>\n<solution>SELECT count(name) FROM book</solution>',
    ]),
  });
}

async function outOfTurns(id = 'spent'): Promise<TrajectoryRecord> {
  return runEpisode({
    id,
    task: { id: 'bk:2', question: 'Which genres are there?', dbPath: db },
    protocolName: 'skyrl',
    config: { maxTurns: 2 },
    pool,
    schemaCache,
    model: scriptedModel([
      '<think>a</think>\n<sql>SELECT genre FROM book</sql>',
      '<think>b</think>\n<sql>SELECT DISTINCT genre FROM book</sql>',
    ]),
  });
}

test(
  'sft: labeled correct → the chat as generated; loss exactly on the assistant turns, never the prompt or ' +
    'observations',
  async () => {
    const r = await answered();
    assert.equal(r.end, 'answer');
    const o = toSftExample(r, labelFor(r));
    assert.ok(o.ok);
    const m = o.example.messages;
    const expected = [
      ...r.prompt.map((p) => ({ role: p.role, content: p.content, loss: false })),
      { role: 'assistant', content: r.turns[0].assistant, loss: true },
      ...r.turns[0].observations.map((p) => ({ role: p.role, content: p.content, loss: false })),
      { role: 'assistant', content: r.turns[1].assistant, loss: true },
    ];
    assert.deepEqual(m, expected);
    assert.ok(r.turns[0].observations.length > 0, 'the exploring turn had an observation');
    assert.equal(m.filter((x) => x.loss).length, 2);
    assert.ok(m.every((x) => x.loss === (x.role === 'assistant')));
    assert.equal(o.example.source, 'as-generated');
    assert.deepEqual(
      [o.example.id, o.example.question, o.example.protocol, o.example.db.path],
      [r.id, Q, 'skyrl', r.task.db.path],
    );
  },
);

test('sft: which labels qualify, and why the others do not', async () => {
  const r = await answered();
  assert.deepEqual(toSftExample(r, undefined), { ok: false, reason: 'not labeled' });
  assert.deepEqual(toSftExample(r, labelFor(r, { verdict: 'incorrect' })), {
    ok: false,
    reason: 'labeled incorrect without a corrected SQL',
  });
  assert.deepEqual(toSftExample(r, labelFor(r, { verdict: 'unsure' })), {
    ok: false,
    reason: 'labeled unsure without a corrected SQL',
  });
  assert.deepEqual(toSftExample(r, labelFor(r, { verdict: null })), {
    ok: false,
    reason: 'no verdict and no corrected SQL',
  });
  assert.match(
    (toSftExample(r, labelFor(r, { recordSha: 'other' })) as { reason: string }).reason,
    /changed since it was labeled/,
  );
  const spent = await outOfTurns();
  assert.equal(spent.end, 'budget');
  assert.match(
    (toSftExample(spent, labelFor(spent)) as { reason: string }).reason,
    /ended without an answer \(budget\)/,
  );
  assert.ok(
    toSftExample(r, labelFor(r, { verdict: 'unsure', correctedSql: GOLD })).ok,
    'a corrected SQL qualifies whatever the verdict',
  );
});

test(
  'sft: a corrected SQL replaces the final answer ' + 'block; reasoning dropped by default, kept when asked',
  async () => {
    const r = await answered();
    const label = labelFor(r, { verdict: 'incorrect', correctedSql: `  ${GOLD}\n` });
    const o = toSftExample(r, label);
    assert.ok(o.ok);
    const last = o.example.messages[o.example.messages.length - 1];
    assert.deepEqual(last, { role: 'assistant', content: `<solution>${GOLD}</solution>`, loss: true });
    assert.equal(o.example.source, 'corrected');
    assert.equal(
      o.example.messages.length,
      r.prompt.length + 1 + r.turns[0].observations.length + 1,
      'same messages, last one rewritten',
    );
    const kept = toSftExample(r, label, { keepReasoning: true });
    assert.ok(kept.ok);
    assert.equal(kept.example.messages.at(-1)!.content, `<think>now count</think>\n<solution>${GOLD}</solution>`);
  },
);

test('sft: an episode that ran out of turns keeps every turn and gets the corrected answer appended', async () => {
  const r = await outOfTurns();
  const o = toSftExample(
    r,
    labelFor(r, { verdict: 'incorrect', correctedSql: 'SELECT DISTINCT genre FROM book WHERE genre IS NOT NULL' }),
  );
  assert.ok(o.ok);
  const m = o.example.messages;
  const obs = r.turns.flatMap((t) => t.observations).length;
  assert.equal(m.length, r.prompt.length + r.turns.length + obs + 1);
  assert.deepEqual(m.at(-1), {
    role: 'assistant',
    content: '<solution>SELECT DISTINCT genre FROM book WHERE genre IS NOT NULL</solution>',
    loss: true,
  });
  assert.deepEqual(
    m.slice(0, -1),
    [
      ...r.prompt.map((p) => ({ ...p, loss: false })),
      ...r.turns.flatMap((t) => [
        { role: 'assistant', content: t.assistant, loss: true },
        ...t.observations.map((p) => ({ ...p, loss: false })),
      ]),
    ],
    'every turn and observation as generated, then the appended answer',
  );
  assert.ok(obs > 0, 'the turns had observations');
});

test('answer blocks: every protocol’s own parser reads the corrected SQL back as the final answer', async () => {
  const schema = await introspectSchema(db);
  const sql = "SELECT title FROM book WHERE genre = 'poetry' ORDER BY year_published";
  const originals: Record<ProtocolName, string> = {
    skyrl: '<think>x</think>\n<solution>SELECT 1</solution>',
    sqltrail: '<reasoning>x</reasoning><solution>SELECT 1</solution>',
    mtir: '<think>x</think>\n<answer>\n```sql\nSELECT 1\n```\n</answer>',
    mtsqlr1: '<think>x</think>\n<answer_sql>SELECT 1</answer_sql>',
    progress: '<think>x</think>\n<sql>SELECT 1</sql>',
  };
  for (const name of PROTOCOL_NAMES) {
    const session = getProtocol(name).create({
      task: { question: Q, dbPath: db, gold: GOLD },
      config: getProtocol(name).defaults,
      schema,
      feedback: () => null,
    });
    for (const keep of [false, true]) {
      const text = rewriteAnswerTurn(name, originals[name], sql, keep);
      const parsed = session.parse(text);
      assert.equal(parsed.sql, sql, `${name} (keepReasoning ${keep}) reads the SQL back`);
      assert.ok(
        parsed.kind === 'answer' || (name === 'progress' && parsed.kind === 'execute'),
        `${name}: ${parsed.kind}`,
      );
      if (keep) assert.ok(text.startsWith('<'), name);
      else assert.equal(text, answerBlock(name, sql));
    }
  }
  assert.equal(answerBlock('mtir', ' SELECT 1 '), '<answer>\n```sql\nSELECT 1\n```\n</answer>');
  assert.equal(rewriteAnswerTurn('skyrl', 'no block at all', 'SELECT 2', true), '<solution>SELECT 2</solution>');
});

test(
  'rl prompts: one per task; a reviewer’s corrected SQL (latest) wins over the task gold; no gold at all is ' +
    'skipped',
  async () => {
    const a1 = await answered('a1');
    const a2 = await answered('a2');
    const spent = await outOfTurns();
    const labels = new Map<string, Label>([
      [
        'a1',
        labelFor(a1, {
          verdict: 'incorrect',
          correctedSql: 'SELECT count(*) FROM author WHERE 1',
          updatedAt: '2026-11-23T10:00:00.000Z',
        }),
      ],
      [
        'a2',
        labelFor(a2, {
          verdict: 'incorrect',
          correctedSql: 'SELECT count(author_id) FROM author',
          updatedAt: '2026-11-23T11:00:00.000Z',
        }),
      ],
    ]);
    const { prompts, skipped } = toRlPrompts([a1, a2, spent], labels);
    assert.equal(prompts.length, 1);
    assert.deepEqual(prompts[0], {
      schema: 'quarry.rl-prompt/1',
      question: Q,
      evidence: null,
      history: [],
      db: { path: a1.task.db.path, id: null },
      gold_sql: 'SELECT count(author_id) FROM author',
      gold_source: 'label',
      difficulty: 'easy',
      task_id: 'bk:1',
      trajectory_ids: ['a1', 'a2'],
    });
    assert.deepEqual(skipped, [
      { id: 'spent', reason: 'no gold SQL: the task has none and no label gives a corrected SQL' },
    ]);
    const plain = toRlPrompts([a1], new Map());
    assert.equal(plain.prompts[0].gold_sql, GOLD);
    assert.equal(plain.prompts[0].gold_source, 'task');
    const fixed = toRlPrompts(
      [spent],
      new Map([['spent', labelFor(spent, { correctedSql: 'SELECT DISTINCT genre FROM book' })]]),
    );
    assert.equal(fixed.prompts[0].gold_sql, 'SELECT DISTINCT genre FROM book');
  },
);

test('export files: labels from the store → the trajectories they point at → JSONL written whole', async () => {
  const dir = tempDir();
  const file = join(dir, 'run.jsonl');
  const good = await answered('good');
  const fixed = await outOfTurns('fixed');
  const wrong = await answered('wrong');
  const w = await TrajectoryWriter.open(file);
  for (const r of [good, fixed, wrong]) await w.write(r);
  await w.close();
  const store = LabelStore.open(quarryPath(dir, 'labels'));
  store.save({
    trajectoryId: 'good',
    file,
    recordSha: recordSha(good),
    verdict: 'correct',
    correctedSql: null,
    tags: [],
    note: '',
  });
  store.save({
    trajectoryId: 'fixed',
    file,
    recordSha: recordSha(fixed),
    verdict: 'incorrect',
    correctedSql: 'SELECT DISTINCT genre FROM book',
    tags: ['loop'],
    note: '',
  });
  store.save({
    trajectoryId: 'wrong',
    file,
    recordSha: recordSha(wrong),
    verdict: 'incorrect',
    correctedSql: null,
    tags: ['wrong join'],
    note: '',
  });
  store.save({
    trajectoryId: 'gone',
    file: join(dir, 'missing.jsonl'),
    recordSha: 'x',
    verdict: 'correct',
    correctedSql: null,
    tags: [],
    note: '',
  });
  const labels = store.all();
  store.close();

  const { records, missing } = await readLabeledRecords(labels);
  assert.deepEqual(records.map((r) => r.id).sort(), ['fixed', 'good', 'wrong']);
  assert.deepEqual(missing, [{ id: 'gone', reason: `trajectory file not found: ${join(dir, 'missing.jsonl')}` }]);
  const byId = new Map(labels.map((l) => [l.trajectoryId, l]));

  const sft = await exportSft(records, byId, join(dir, 'out', 'sft.jsonl'));
  assert.equal(sft.written, 2);
  assert.deepEqual(sft.skipped, [{ id: 'wrong', reason: 'labeled incorrect without a corrected SQL' }]);
  const lines = readFileSync(sft.out, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; source: string; messages: { loss: boolean; role: string }[] });
  assert.deepEqual(lines.map((l) => [l.id, l.source]).sort(), [
    ['fixed', 'corrected'],
    ['good', 'as-generated'],
  ]);
  for (const l of lines) assert.ok(l.messages.every((m) => m.loss === (m.role === 'assistant')));

  const rl = await exportRlPrompts([good, fixed, wrong], byId, join(dir, 'rl.jsonl'));
  assert.equal(rl.written, 2);
  const prompts = readFileSync(rl.out, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { question: string; gold_sql: string; gold_source: string });
  assert.deepEqual(
    prompts.map((p) => [p.gold_sql, p.gold_source]),
    [
      [GOLD, 'task'],
      ['SELECT DISTINCT genre FROM book', 'label'],
    ],
  );
});

test(
  'corrected SQL check: against the gold with the evaluator’s comparator, else against the final SQL, else ' +
    'just run',
  async () => {
    const run = pool.exec.bind(pool);
    const base = { dbPath: db, run, timeoutMs: 5000 };
    const ok = await checkCorrectedSql({
      ...base,
      sql: 'SELECT count(author_id) FROM author',
      gold: GOLD,
      finalSql: 'SELECT 1',
    });
    assert.equal(ok.against, 'gold');
    assert.equal(ok.match, true);
    assert.equal(ok.reason, 'match');
    assert.equal(ok.result?.ok, true);
    assert.deepEqual(ok.result?.columns, ['count(author_id)']);
    const wrong = await checkCorrectedSql({ ...base, sql: 'SELECT count(*) FROM book', gold: GOLD, finalSql: null });
    assert.deepEqual([wrong.against, wrong.match, wrong.reason], ['gold', false, 'values']);
    const broken = await checkCorrectedSql({ ...base, sql: 'SELECT nope FROM author', gold: GOLD, finalSql: null });
    assert.deepEqual([broken.match, broken.reason, broken.result?.ok], [false, 'pred-error', false]);
    assert.match(broken.detail ?? '', /no such column: nope/);
    const vsFinal = await checkCorrectedSql({
      ...base,
      sql: 'SELECT name FROM author ORDER BY name',
      gold: null,
      finalSql: 'SELECT name FROM author',
    });
    assert.deepEqual([vsFinal.against, vsFinal.match], ['final', true]);
    const badRef = await checkCorrectedSql({ ...base, sql: 'SELECT 1', gold: 'SELECT x FROM nowhere', finalSql: null });
    assert.equal(badRef.match, null);
    assert.match(badRef.detail ?? '', /the gold SQL failed: no such table: nowhere/);
    const alone = await checkCorrectedSql({ ...base, sql: 'SELECT 42 AS answer', gold: null, finalSql: '  ' });
    assert.deepEqual([alone.against, alone.match, alone.result?.rows], ['none', null, [[42]]]);
  },
);

test('quarry export: sft from the workspace store, rl for a trajectory file; bad input is a usage error', async () => {
  const dir = tempDir();
  const good = await answered('cli-good');
  const wrong = await answered('cli-wrong');
  const file = join(dir, 'run.jsonl');
  const w = await TrajectoryWriter.open(file);
  for (const r of [good, wrong]) await w.write(r);
  await w.close();
  const store = LabelStore.open(quarryPath(dir, 'labels'));
  store.save({
    trajectoryId: 'cli-good',
    file,
    recordSha: recordSha(good),
    verdict: 'correct',
    correctedSql: null,
    tags: [],
    note: '',
  });
  store.save({
    trajectoryId: 'cli-wrong',
    file,
    recordSha: recordSha(wrong),
    verdict: 'incorrect',
    correctedSql: null,
    tags: [],
    note: '',
  });
  store.close();
  const cli = async (...args: string[]) => {
    const out = capture();
    const err = capture();
    const code = await main(['export', ...args], { stdout: out.stream, stderr: err.stream, cwd: dir });
    return { code, out: out.text(), err: err.text() };
  };
  const sft = await cli('--format', 'sft', '--out', 'sft.jsonl');
  assert.equal(sft.code, 0, sft.err);
  assert.match(sft.out, /wrote 1 SFT examples to .*sft\.jsonl \(1 left out\)/);
  assert.match(sft.err, /left out cli-wrong: labeled incorrect without a corrected SQL/);
  assert.equal(JSON.parse(readFileSync(join(dir, 'sft.jsonl'), 'utf8')).id, 'cli-good');
  const rl = await cli('--format', 'rl', '--trajectories', 'run.jsonl', '--out', 'rl.jsonl');
  assert.equal(rl.code, 0, rl.err);
  assert.match(rl.out, /wrote 1 RL prompts/);
  assert.equal(JSON.parse(readFileSync(join(dir, 'rl.jsonl'), 'utf8')).gold_sql, GOLD);
  const noTraj = await cli('--format', 'rl', '--out', 'x.jsonl');
  assert.equal(noTraj.code, 2);
  assert.match(noTraj.err, /--format rl needs --trajectories/);
  const noStore = await cli('--format', 'sft', '--labels', 'nowhere.sqlite', '--out', 'x.jsonl');
  assert.equal(noStore.code, 2);
  assert.match(noStore.err, /no label store at .*nowhere\.sqlite/);
});

test(
  'issue 9, item 3: quarry export reads its inputs without changing them and never writes over an input or ' +
    'a database',
  async () => {
    const dir = tempDir();
    const good = await answered('safe-good');
    const file = join(dir, 'run.jsonl');
    const w = await TrajectoryWriter.open(file);
    await w.write(good);
    await w.close();
    const storePath = quarryPath(dir, 'labels');
    const store = LabelStore.open(storePath);
    store.save({
      trajectoryId: 'safe-good',
      file,
      recordSha: recordSha(good),
      verdict: 'correct',
      correctedSql: null,
      tags: [],
      note: '',
    });
    store.close();
    const cli = async (...args: string[]) => {
      const out = capture();
      const err = capture();
      const code = await main(['export', ...args], { stdout: out.stream, stderr: err.stream, cwd: dir });
      return { code, out: out.text(), err: err.text() };
    };
    const bytes = (p: string) => readFileSync(p);

    // A user's database given as --labels: refused, and its bytes (its header's journal mode too) unchanged.
    const userDb = buildDb('bookshop', { dir: tempDir() });
    const before = bytes(userDb);
    const notStore = await cli('--format', 'sft', '--labels', userDb, '--out', 'a.jsonl');
    assert.equal(notStore.code, 2);
    assert.match(notStore.err, /not a Quarry label store/);
    assert.deepEqual(bytes(userDb), before);
    // An empty file given as --labels stays empty.
    const empty = join(dir, 'empty.sqlite');
    writeFileSync(empty, '');
    const emptyRun = await cli('--format', 'sft', '--labels', empty, '--out', 'b.jsonl');
    assert.equal(emptyRun.code, 2);
    assert.match(emptyRun.err, /empty file, not a Quarry label store/);
    assert.equal(bytes(empty).length, 0);
    // --out naming an input or a database is refused; the input is untouched.
    const storeBefore = bytes(storePath);
    for (const [out, why] of [
      [storePath, /is also an input|SQLite database/],
      [file, /is also an input/],
      [userDb, /SQLite database/],
    ] as const) {
      const r = await cli('--format', 'sft', '--trajectories', file, '--out', out);
      assert.equal(r.code, 2, out);
      assert.match(r.err, why);
    }
    assert.deepEqual(bytes(storePath), storeBefore);
    assert.equal((await readTrajectories(file)).records.length, 1);
    // Another existing file needs --force; an earlier export of the same kind is simply replaced.
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'my notes\n');
    const refused = await cli('--format', 'sft', '--out', notes);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /exists and is not SFT examples Quarry wrote; pass --force/);
    assert.equal(readFileSync(notes, 'utf8'), 'my notes\n');
    assert.equal((await cli('--format', 'sft', '--out', notes, '--force')).code, 0);
    assert.equal((await cli('--format', 'sft', '--out', 'c.jsonl')).code, 0);
    assert.equal((await cli('--format', 'sft', '--out', 'c.jsonl')).code, 0, 'an earlier SFT export is replaced');
  },
);
