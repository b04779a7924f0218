// `quarry data rl` on generated corpora (test/helpers/rlCorpus.ts) over a real SQLite fixture: questions whose
// database is missing are skipped and each database named once (--strict refuses, naming them); train.parquet written
// in many small row groups reads back, with hyparquet's reader, complete and equal to train.jsonl; data.json counts
// every drop but lists a bounded number. The 250,000-question run is bench/dataRl.bench.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { main } from '../../../src/cli/main';
import { DROPPED_LISTED, makeRlData } from '../../../src/app/data/rl';
import { tempDir } from '../../helpers/fixtures';
import { writeRlCorpus } from '../../helpers/rlCorpus';
import { capture } from '../captureStream';

async function quarry(cwd: string, ...argv: string[]) {
  const out = capture();
  const err = capture();
  const code = await main(argv, { stdout: out.stream, stderr: err.stream, cwd });
  return { code, out: out.text(), err: err.text() };
}

const jsonl = (path: string): unknown[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
const dataJson = (dir: string) => JSON.parse(readFileSync(join(dir, 'data.json'), 'utf8'));
/** A row as JSON has it: hyparquet gives int64 values as bigints and a null list as undefined. */
const asJson = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x === undefined ? null : x)));

test('data rl: a question with no database is skipped, each database named once; --strict refuses', async () => {
  const dir = tempDir('quarry-data-missing-');
  // 20 over pets (none failing), then 5 over two databases that are not there: ghost 3, gone 2.
  const c = await writeRlCorpus(dir, 20, { missingDbs: ['ghost', 'gone'], missing: 5, failEvery: 1000 });
  const args = ['data', 'rl', '--dataset', `spider:${c.file}`, '--db-dir', c.dbDir, '--protocol', 'skyrl'];

  const out = join(dir, 'out');
  const r = await quarry(dir, ...args, '--out', out);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /wrote 20 of 25 questions to .*train\.parquet and train\.jsonl \(dropped: missing-database 5\)/);
  const lines = r.err.split('\n').filter((l) => l.includes('no database for db_id'));
  assert.deepEqual(lines, [
    `quarry data rl: warning: no database for db_id ghost in ${c.dbDir}: skipped its 3 questions ` +
      '(--strict refuses instead)',
    `quarry data rl: warning: no database for db_id gone in ${c.dbDir}: skipped its 2 questions ` +
      '(--strict refuses instead)',
  ]);
  const doc = dataJson(out);
  assert.deepEqual(doc.missing, [
    { db_id: 'ghost', path: join(c.dbDir, 'ghost', 'ghost.sqlite'), questions: 3 },
    { db_id: 'gone', path: join(c.dbDir, 'gone', 'gone.sqlite'), questions: 2 },
  ]);
  assert.deepEqual([doc.counts.questions, doc.counts.written], [25, 20]);
  assert.deepEqual(doc.counts.dropped, { 'missing-database': 5 });
  assert.equal(doc.dataset.questions, 25);
  assert.deepEqual(
    doc.databases.files.map((f: { db_id: string }) => f.db_id),
    ['pets'],
  );
  assert.equal(jsonl(join(out, 'train.jsonl')).length, 20);

  const strictOut = join(dir, 'strict');
  const s = await quarry(dir, ...args, '--out', strictOut, '--strict');
  assert.equal(s.code, 2);
  assert.match(s.err, /^quarry data rl: no database for db_id ghost, gone in /);
  assert.equal(s.out, '');
  assert.throws(() => readFileSync(join(strictOut, 'train.jsonl')), /ENOENT/);
});

test('data rl: train.parquet in many row groups reads back complete and equal to train.jsonl', async () => {
  const dir = tempDir('quarry-data-groups-');
  // Every second gold fails: 1,500 drops, more than data.json lists.
  const c = await writeRlCorpus(dir, 3000, { failEvery: 2 });
  const out = join(dir, 'out');
  const r = await makeRlData({
    dataset: 'spider',
    file: c.file,
    dbDir: c.dbDir,
    protocol: 'skyrl',
    outDir: out,
    rowGroup: { rows: 256 },
  });
  assert.equal(r.records, 1500);
  const rows = jsonl(join(out, 'train.jsonl'));
  assert.equal(rows.length, 1500);

  const file = await asyncBufferFromFile(join(out, 'train.parquet'));
  const meta = await parquetMetadataAsync(file);
  assert.equal(meta.row_groups.length, Math.ceil(1500 / 256));
  assert.ok(meta.row_groups.every((g) => Number(g.num_rows) <= 256));
  assert.equal(Number(meta.num_rows), 1500);
  const back = await parquetReadObjects({ file });
  assert.equal(back.length, 1500);
  assert.deepEqual(asJson(back), rows);
  assert.deepEqual(
    (rows as { extra_info: { index: number } }[]).slice(0, 3).map((x) => x.extra_info.index),
    [0, 2, 4],
  );

  const doc = dataJson(out);
  assert.deepEqual(doc.counts.dropped, { 'gold-fails': 1500 });
  assert.equal(doc.dropped.length, DROPPED_LISTED);
  assert.equal(doc.droppedNotListed, 1500 - DROPPED_LISTED);
  assert.deepEqual(doc.missing, []);
  assert.deepEqual(
    doc.outputs.map((o: { file: string; rows: number }) => [o.file, o.rows]),
    [
      ['train.parquet', 1500],
      ['train.jsonl', 1500],
    ],
  );
});
