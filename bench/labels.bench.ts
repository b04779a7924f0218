// The label store as a reviewer meets it: how long one save takes (a committed, fsynced transaction: the panel says
// "Saved" only after it), reading the labels of a 10,000-trajectory file (what opening the queue and counting progress
// do), ordering that queue, and a second connection saving while the first reads. No data set needed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { writeResult, percentile } from './common';
import { LabelStore } from '../src/core/labels/store';
import { orderQueue } from '../src/core/labels/queue';
import type { Verdict } from '../src/core/labels/types';

const N = Number(process.env.LABELS_BENCH_N ?? 10_000);
const SAVES = Number(process.env.LABELS_BENCH_SAVES ?? 1_000);
const REPEATS = 5;
const VERDICTS: Verdict[] = ['correct', 'incorrect', 'unsure'];
const TAGS = ['loop', 'wrong join', 'format', 'value mismatch'];

function ms(f: () => void): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

const dir = mkdtempSync(join(tmpdir(), 'quarry-labels-bench-'));
try {
  const store = LabelStore.open(join(dir, 'labels.sqlite'), { labeler: 'bench' });
  const ids = Array.from({ length: N }, (_, i) => `traj-${i}`);
  const saveMs: number[] = [];
  for (let i = 0; i < SAVES; i++) {
    // Every third trajectory of the file is labeled, spread over it as a reviewer's queue would leave them.
    const id = ids[(i * 3) % N];
    saveMs.push(
      ms(() =>
        store.save({
          trajectoryId: id,
          file: '/data/run.jsonl',
          recordSha: 'f'.repeat(64),
          verdict: VERDICTS[i % 3],
          correctedSql: i % 4 === 0 ? `SELECT name FROM singer WHERE age > ${i}` : null,
          tags: i % 2 ? [TAGS[i % 4]] : [],
          note: i % 5 ? '' : 'checked by hand',
        }),
      ),
    );
  }
  saveMs.sort((a, b) => a - b);

  const readMs: number[] = [];
  const orderMs: number[] = [];
  let labeled = 0;
  for (let r = 0; r < REPEATS; r++) {
    let labels = new Map();
    readMs.push(
      ms(() => {
        labels = store.getMany(ids);
      }),
    );
    orderMs.push(
      ms(() => {
        labeled = N - orderQueue(ids, labels, 'unlabeled').length;
      }),
    );
  }
  readMs.sort((a, b) => a - b);
  orderMs.sort((a, b) => a - b);

  // A second window saving while this one reads the whole file's labels (WAL: readers do not block the writer).
  const other = LabelStore.open(join(dir, 'labels.sqlite'), { labeler: 'other' });
  const concurrentSaveMs: number[] = [];
  for (let i = 0; i < 100; i++) {
    store.getMany(ids.slice(0, 1000));
    concurrentSaveMs.push(
      ms(() =>
        other.save({
          trajectoryId: `other-${i}`,
          file: '/data/run.jsonl',
          recordSha: 'x',
          verdict: 'unsure',
          correctedSql: null,
          tags: ['loop'],
          note: '',
        }),
      ),
    );
  }
  concurrentSaveMs.sort((a, b) => a - b);
  other.close();
  store.close();

  const result = {
    trajectories: N,
    saves: SAVES,
    labeled,
    saveMs: { p50: percentile(saveMs, 50), p95: percentile(saveMs, 95), max: saveMs[saveMs.length - 1] },
    readAllLabelsMs: { median: percentile(readMs, 50), min: readMs[0] },
    orderQueueMs: { median: percentile(orderMs, 50) },
    saveWithSecondConnectionMs: { p50: percentile(concurrentSaveMs, 50), p95: percentile(concurrentSaveMs, 95) },
    loadavg1: loadavg()[0],
    notes:
      'save = one BEGIN IMMEDIATE transaction, synchronous=FULL (fsync of the WAL at commit), on the ' +
      'bench machine tmpdir',
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult('labels', result);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
