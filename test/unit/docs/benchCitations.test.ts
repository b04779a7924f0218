// Tests of unit/docs/benchCitations: every number the docs quote next to `bench/results/NAME.json` is in that file
// (rounded as written), every cited file exists, and bench/results/latest.json holds each result file as it is (what
// `npm run bench` gathers there). Failures name the doc, line, file and the numbers that are not in it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from '../../helpers/fixtures';
import { readDocs } from './markdownDocs';
import { citationProblems, citedUnits, writtenNumbers } from './benchCitations';

test('the citation checker reads numbers as written and catches a stale one', () => {
  assert.deepEqual(
    writtenNumbers(
      '16.7x over 20.71 s, 6,904/6\u202f904 items, 81.8 %, p99 359 ms, Vote@8, SQLite 3.40.1, 4.3-5.8 ' +
        '(issue 30, Table 8)',
    ).map((n) => n.written),
    ['16.7', '20.71', '6,904', '6\u202f904', '81.8 %', '359', '4.3', '5.8'],
  );
  const root = tempDir();
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'x.json'),
    JSON.stringify({
      speedup: 16.724,
      share: 0.8182,
      ms: 487,
      at: '2026-11-25T11:26:22Z',
      notes: 'runs 0.45 and 0.52',
    }),
  );
  const doc = {
    path: 'docs/x.md',
    text:
      'On 2026-11-25 it ran 16.7x faster in 0.49 s, 81.8% caught, 0.45 and 0.52 (`bench/results/x.json`). ' +
      'Not cited: 99.\n\n' +
      'Measured on 2026-11-22 (`bench/results/x.json`):\n\n| a | b |\n|---|---|\n| 16.72 | 6.2x |\n',
  };
  const units = citedUnits(doc);
  assert.deepEqual(
    units.map((u) => [u.line, citationProblems(root, u)]),
    [
      [1, []],
      [3, ['the date 2026-11-22']],
      [7, ['6.2']],
    ],
  );
  assert.deepEqual(citationProblems(root, { ...units[0], results: ['bench/results/gone.json'] }), [
    'bench/results/gone.json does not exist',
  ]);
});

test('every number quoted next to a bench/results/ file in README.md and docs/*.md is in that file', () => {
  const problems: string[] = [];
  for (const doc of readDocs(repoRoot)) {
    for (const unit of citedUnits(doc)) {
      const wrong = citationProblems(repoRoot, unit);
      if (wrong.length)
        problems.push(
          `${unit.file}:${unit.line} (${unit.results.join(', ')}): ${wrong.join(', ')}\n      in: ` +
            unit.text.slice(0, 160),
        );
    }
  }
  assert.equal(
    problems.length,
    0,
    `${problems.length} cited sentence(s) or table row(s) quote numbers their result file does not hold ` +
      '(docs/bench.md, "Quoting results in the docs": copy the number from the file, rounded, or move a number ' +
      'that is not from it out of the citing sentence):\n  ' +
      problems.join('\n  '),
  );
});

test('bench/results/latest.json holds every result file as it is', () => {
  const dir = join(repoRoot, 'bench', 'results');
  const latest = JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8')) as Record<string, unknown>;
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && f !== 'latest.json')
    .map((f) => f.slice(0, -5));
  const stale = names.filter(
    (n) => JSON.stringify(latest[n]) !== JSON.stringify(JSON.parse(readFileSync(join(dir, `${n}.json`), 'utf8'))),
  );
  const extra = Object.keys(latest).filter((k) => !names.includes(k));
  assert.deepEqual(
    { stale, extra },
    { stale: [], extra: [] },
    'bench/results/latest.json is what bench/run.mjs gathers from bench/results/*.json; entries that differ from ' +
      'their file (stale) or have none (extra) mean a result file changed without it: regather with ' +
      '`node_modules/.bin/node bench/run.mjs none` (no benchmark has that name, so it runs none, says so and ' +
      'rewrites latest.json)',
  );
});
