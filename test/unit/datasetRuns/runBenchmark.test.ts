// runBenchmark as a library call: a caller's pool and signal, and the files it leaves when nothing could run.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBenchmark, formatReport } from '../../../src/core/datasetRuns';
import { loadDataset } from '../../../src/core/datasets';
import { createModel } from '../../../src/core/models';
import { createSqlPool } from '../../../src/core/db';
import { startReplayServer } from '../../support/openaiReplayServer';
import { tempDir } from '../../helpers/fixtures';
import { buildDatasetDbs, datasetFixtures } from '../datasets/dbs';

const dbDir = buildDatasetDbs();
const dataset = loadDataset('spider', join(datasetFixtures, 'spider-dev.json'), dbDir);
const pool = createSqlPool({ size: 1 });
after(() => pool.close());

test('a signal aborted before the start runs nothing and writes empty files with a partial report', async () => {
  const server = await startReplayServer({ script: [{ response: '<solution>SELECT 1</solution>' }] });
  const model = await createModel(server.spec());
  try {
    const outDir = join(tempDir('quarry-rb-abort-'), 'run');
    const report = await runBenchmark({ dataset, model, protocol: 'skyrl', outDir, signal: AbortSignal.abort(), pool });
    assert.deepEqual(
      [report.items, report.planned, report.complete, report.stopped, report.trajectories],
      [0, 4, false, 'cancelled', 0],
    );
    assert.equal(server.requests.length, 0);
    for (const f of ['predictions.sql', 'gold.sql', 'trajectories.jsonl'])
      assert.equal(readFileSync(join(outDir, f), 'utf8'), '', f);
    assert.deepEqual(JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8')).ex, {
      greedy: 0,
      majority: null,
      passAtK: null,
    });
    assert.match(formatReport(report), /0 of 4 questions \(INTERRUPTED: partial results\)/);
  } finally {
    await model.close();
    await server.close();
  }
});

test("a caller's pool is shared and left open; progress reaches every episode and question", async () => {
  const server = await startReplayServer({ script: [{ response: '<solution>SELECT count(*) FROM owner</solution>' }] });
  const model = await createModel(server.spec());
  try {
    const seen: number[] = [];
    let last = { episodesDone: 0, questionsScored: 0, greedyCorrect: 0 };
    const report = await runBenchmark({
      dataset,
      model,
      protocol: 'skyrl',
      samples: 2,
      jobs: 2,
      limit: 2,
      outDir: tempDir('quarry-rb-pool-'),
      pool,
      onProgress: (p) => {
        seen.push(p.episodesDone);
        last = p;
      },
    });
    assert.deepEqual([report.items, report.complete, report.trajectories], [2, true, 4]);
    assert.deepEqual([last.episodesDone, last.questionsScored, last.greedyCorrect], [4, 2, 1]);
    assert.ok(
      seen.every((n, i) => i === 0 || n >= seen[i - 1]),
      'progress never goes back',
    );
    const r = await pool.exec({ db: dataset.tasks[0].dbPath, sql: 'SELECT 1' });
    assert.equal(r.ok, true, 'the pool is still usable');
  } finally {
    await model.close();
    await server.close();
  }
});

test('bad arguments are rejected before anything starts', async () => {
  const server = await startReplayServer({ script: [] });
  const model = await createModel(server.spec());
  try {
    await assert.rejects(
      runBenchmark({ dataset, model, protocol: 'skyrl', samples: 0, outDir: tempDir() }),
      /samples must be a positive integer, got 0/,
    );
    await assert.rejects(
      runBenchmark({ dataset, model, protocol: 'skyrl', jobs: 1.5, outDir: tempDir() }),
      /jobs must be a positive integer, got 1\.5/,
    );
    assert.equal(server.requests.length, 0);
  } finally {
    await model.close();
    await server.close();
  }
});
