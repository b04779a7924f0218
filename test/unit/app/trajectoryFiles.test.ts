// src/app/trajectoryFiles.ts: the one way replay, diagnostics, labeling and `quarry score` open a trajectory file and
// find each record's database; and src/app/ask.ts, the one ask use case, with its save policy.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSqlPool } from '../../../src/core/db/pool';
import { openTrajectoryFile, databaseResolver, TrajectoryFileError } from '../../../src/app/trajectoryFiles';
import { ask } from '../../../src/app/ask';
import { trajectoryStorePath, DEFAULT_TRAJECTORY_STORE } from '../../../src/app/trajectoryStore';
import { readTrajectories } from '../../../src/core/trajectories';
import type { TrajectoryRecord } from '../../../src/core/trajectories/types';
import { buildDb, tempDir } from '../../helpers/fixtures';
import { scriptedModel } from '../../support/scriptedModel';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const db = buildDb('spider-concert');

async function episode(dir: string, question: string): Promise<TrajectoryRecord> {
  const saveTo = join(dir, 'made.jsonl');
  const model = scriptedModel(['<think>count</think>\n<solution>SELECT count(*) FROM singer</solution>']);
  const r = await ask({ question, dbPath: db, protocol: 'skyrl', model, pool, saveTo });
  return r.record;
}

test('openTrajectoryFile: records, lines, first record per id, bad and unfinished lines in words', async () => {
  const dir = tempDir();
  const rec = await episode(dir, 'How many singers?');
  const file = join(dir, 'mixed.jsonl');
  writeFileSync(
    file,
    [JSON.stringify(rec), '{"schema": "nope"}', JSON.stringify(rec), JSON.stringify(rec).slice(0, 40)].join('\n'),
  );
  const opened = await openTrajectoryFile(file);
  assert.deepEqual(
    [opened.records.length, opened.lines, opened.byId.size, opened.invalid.map((e) => e.line)],
    [2, [1, 3], 1, [2]],
  );
  assert.match(opened.truncated ?? '', /^line 4 is unfinished \(40 characters\)/);
  await assert.rejects(openTrajectoryFile(file, { onInvalid: 'throw' }), /line 2/);
  await assert.rejects(
    openTrajectoryFile(join(dir, 'missing.jsonl')),
    (e: Error) => e instanceof TrajectoryFileError && /^no such trajectory file: /.test(e.message),
  );
  await assert.rejects(openTrajectoryFile(dir), /is a directory, not a trajectory file/);
});

test("databaseResolver: absolute as written, relative against the trajectory file's folder, or Spider layout", () => {
  const rec = (path: string, id: string | null) =>
    ({ task: { db: { path, id, sha256: '' } } }) as unknown as TrajectoryRecord;
  const at = databaseResolver('/data/runs/run1.jsonl');
  assert.equal(at(rec('/abs/x.sqlite', null)), '/abs/x.sqlite');
  assert.equal(at(rec('dbs/x.sqlite', null)), '/data/runs/dbs/x.sqlite');
  const spider = databaseResolver('/data/runs/run1.jsonl', { dbDir: '/spider/database' });
  assert.equal(
    spider(rec('/elsewhere/concert_singer.sqlite', 'concert_singer')),
    '/spider/database/concert_singer/concert_singer.sqlite',
  );
  assert.equal(spider(rec('/elsewhere/x.sqlite', null)), '/spider/database/x.sqlite');
});

test(
  'ask: saves the episode, follow-ups keep the protocol with results filled, ' + 'a failed save is reported',
  async () => {
    const dir = tempDir();
    const store = trajectoryStorePath(dir);
    assert.equal(store, join(dir, DEFAULT_TRAJECTORY_STORE));
    const first = await ask({
      question: 'How many singers?',
      dbPath: db,
      protocol: 'sqltrail',
      pool,
      saveTo: store,
      model: scriptedModel(['<solution>SELECT count(*) FROM singer</solution>']),
    });
    const n = (await pool.exec({ db, sql: 'SELECT count(*) FROM singer' })).rows[0][0];
    assert.deepEqual(
      [first.record.end, first.savedTo, first.saveError, first.final?.rows],
      ['answer', store, null, [[n]]],
    );
    const follow = await ask({
      question: 'And their names?',
      dbPath: db,
      protocol: 'sqltrail',
      pool,
      saveTo: store,
      exchanges: [{ question: 'How many singers?', sql: first.record.finalSql, protocol: 'sqltrail' }],
      model: scriptedModel(['<solution>SELECT name FROM singer</solution>']),
      runFinal: false,
    });
    assert.equal(follow.record.protocol.name, 'sqltrail');
    assert.equal(follow.final, null, 'runFinal: false leaves the final SQL to the caller');
    assert.deepEqual(
      follow.record.task.history,
      [{ question: 'How many singers?', sql: 'SELECT count(*) FROM singer', result: `[(${n},)]` }],
      'ask() ran the earlier SQL for the memory, which was given without its result',
    );
    assert.deepEqual(
      (await readTrajectories(store)).records.map((r) => r.id),
      [first.record.id, follow.record.id],
    );

    const blocked = join(dir, 'blocked');
    mkdirSync(blocked);
    writeFileSync(join(blocked, 'file'), '');
    const bad = await ask({
      question: 'How many singers?',
      dbPath: db,
      protocol: 'skyrl',
      pool,
      saveTo: join(blocked, 'file', 'sub.jsonl'),
      model: scriptedModel(['<think>c</think><solution>SELECT count(*) FROM singer</solution>']),
    });
    assert.equal(bad.savedTo, null);
    assert.match(bad.saveError ?? '', /^the trajectory could not be saved to .*sub\.jsonl: /);
    assert.equal(bad.record.end, 'answer', 'the answer is still there');
    const off = await ask({
      question: 'How many singers?',
      dbPath: db,
      protocol: 'skyrl',
      pool,
      saveTo: null,
      model: scriptedModel(['<think>c</think><solution>SELECT count(*) FROM singer</solution>']),
    });
    assert.deepEqual([off.savedTo, off.saveError], [null, null]);
    assert.equal(readFileSync(store, 'utf8').trim().split('\n').length, 2, 'saving off writes nothing');
  },
);
