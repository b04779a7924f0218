// Progress-SQL's Table 8 mismatch rates (App. E.4) over a run: the ODT tags of each prediction mapped to the SELECT,
// JOIN, WHERE and GROUP categories, their rates and Avg. Err., in core, `quarry score` and the diagnostics data.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runQuarry } from '../../support/cli';
import { loadPanel } from '../../../src/core/rewards';
import { recordsMismatch, type MismatchScope } from '../../../src/core/rewards/mismatch';
import { scoreRun } from '../../../src/core/rewards/scoreRun';
import { runDiagnostics } from '../../../src/core/rewards/report';
import type { TrajectoryRecord } from '../../../src/core/trajectories/types';
import { tempDir } from '../../helpers/fixtures';
import { newPool, newResources, trajectory } from './fixtures';

const pool = newPool();
after(() => pool.close());

const GOLD =
  'SELECT c.title, count(*) FROM student AS s JOIN class AS c ON s.class_id = c.id WHERE s.age > 19 GROUP BY c.title';
const NO_WHERE = 'SELECT c.title, count(*) FROM student AS s JOIN class AS c ON s.class_id = c.id GROUP BY c.title';
const NO_JOIN = 'SELECT count(*) FROM student WHERE age > 19';
const DISTINCT = 'SELECT DISTINCT c.title FROM student AS s JOIN class AS c ON s.class_id = c.id WHERE s.age > 19';

/** A single-turn Progress-SQL answer, at a temperature (0 = greedy). */
function answer(id: string, sql: string | null, temperature: number, gold = GOLD): TrajectoryRecord {
  const t = trajectory({
    id,
    protocol: 'progress',
    gold,
    finalSql: sql,
    end: sql === null ? 'invalid' : 'answer',
    maxTurns: 1,
    turns: [
      {
        assistant: sql === null ? 'no idea' : `<think>x</think> <sql>${sql}</sql>`,
        kind: sql === null ? 'invalid' : 'execute',
        sql,
      },
    ],
  });
  t.model.sampling = { temperature };
  return t;
}

// Tags (checked against quarry odt): NO_WHERE → WHERE_ERROR; NO_JOIN → JOIN_MISSING, JOIN_KEY_MISMATCH,
// FROM_OR_JOIN_TABLE_MISMATCH, SELECT_ERROR, GROUP_BY_MISSING, GROUP_BY_ERROR; DISTINCT → SELECT_ERROR,
// AGGREGATE_ERROR, DISTINCT_MISMATCH, GROUP_BY_MISSING, GROUP_BY_ERROR.
const run = [
  answer('same', GOLD, 0),
  answer('no-where', NO_WHERE, 0),
  answer('no-join', NO_JOIN, 1),
  answer('distinct', DISTINCT, 1),
  answer('no-sql', null, 1),
  answer('broken', 'SELEC title FRM class', 1),
];

const rates = (s: MismatchScope) =>
  Object.fromEntries([...s.categories.map((c) => [c.name, c.rate]), ['avg', s.average], ['any', s.anyTag.rate]]);

test(
  'Table 8: tags map to SELECT/JOIN/WHERE/GROUP, rates ' + 'over the compared predictions, Avg. Err. is their mean',
  () => {
    // App. E.4: "we compare the predicted SQL with the gold SQL using ODT and map fine-grained diagnostic tags into
    // four
    // coarse structural categories: SELECT, JOIN, WHERE, and GROUP errors"; Table 8: "Avg. Err. averages SELECT, JOIN,
    // WHERE, and GROUP mismatch rates".
    const { report, outcomes } = recordsMismatch(run, newResources(pool));
    assert.equal(report.source, 'Progress-SQL App. E.4, Table 8');
    assert.equal(report.sql, 'final');
    const [all, greedy] = report.scopes;
    assert.equal(all.name, 'all');
    assert.deepEqual(
      [all.trajectories, all.compared, all.excluded],
      [6, 4, { noSql: 1, predUnparsed: 1, goldUnparsed: 0 }],
    );
    assert.deepEqual(rates(all), { SELECT: 0.5, JOIN: 0.25, WHERE: 0.25, GROUP: 0.5, avg: 0.375, any: 0.75 });
    assert.deepEqual(
      all.categories.map((c) => [c.name, c.items]),
      [
        ['SELECT', ['no-join', 'distinct']],
        ['JOIN', ['no-join']],
        ['WHERE', ['no-where']],
        ['GROUP', ['no-join', 'distinct']],
      ],
    );
    const fired = Object.fromEntries(all.tags.filter((t) => t.count > 0).map((t) => [t.tag, t.count]));
    assert.deepEqual(fired, {
      JOIN_MISSING: 1,
      JOIN_KEY_MISMATCH: 1,
      FROM_OR_JOIN_TABLE_MISMATCH: 1,
      WHERE_ERROR: 1,
      SELECT_ERROR: 2,
      AGGREGATE_ERROR: 1,
      DISTINCT_MISMATCH: 1,
      GROUP_BY_MISSING: 2,
      GROUP_BY_ERROR: 2,
    });
    assert.equal(all.tags.length, 12, 'every tag is listed, unfired ones with 0');
    // Table 8 is over greedy predictions: a run that mixes greedy and sampled trajectories also reports the greedy
    // ones.
    assert.deepEqual([greedy.name, greedy.trajectories, greedy.compared], ['greedy', 2, 2]);
    assert.deepEqual(rates(greedy), { SELECT: 0, JOIN: 0, WHERE: 0.5, GROUP: 0, avg: 0.125, any: 0.5 });
    assert.deepEqual(
      run.map((r) => outcomes.get(r)?.status),
      ['compared', 'compared', 'compared', 'compared', 'no-sql', 'pred-unparsed'],
    );
  },
);

test(
  'the first SQL of a multi-turn rollout (its Round 1 answer) can be compared instead of the final one; a ' +
    'gold that does not parse is counted apart',
  () => {
    const rollout = trajectory({
      id: 'rollout',
      protocol: 'progress',
      gold: GOLD,
      finalSql: GOLD,
      maxTurns: 4,
      turns: [
        { assistant: `<think>a</think> <sql>${NO_JOIN}</sql>`, sql: NO_JOIN },
        { assistant: `<think>b</think> <sql>${GOLD}</sql>`, sql: GOLD },
      ],
    });
    const badGold = answer('bad-gold', NO_WHERE, 0, 'SELEC nothing');
    const res = newResources(pool);
    const final = recordsMismatch([rollout, badGold], res).report.scopes[0];
    const first = recordsMismatch([rollout, badGold], res, { sql: 'first' }).report;
    assert.equal(first.sql, 'first');
    assert.deepEqual([final.compared, final.anyTag.count, final.excluded.goldUnparsed], [1, 0, 1]);
    assert.deepEqual(rates(first.scopes[0]), { SELECT: 1, JOIN: 1, WHERE: 0, GROUP: 1, avg: 0.75, any: 1 });
  },
);

test('scoreRun and the diagnostics data carry the report; each listed trajectory carries its tags', async () => {
  const res = newResources(pool);
  const report = await scoreRun(run, loadPanel('progress-oneshot'), { resources: res });
  assert.deepEqual(rates(report.mismatch.scopes[0]), {
    SELECT: 0.5,
    JOIN: 0.25,
    WHERE: 0.25,
    GROUP: 0.5,
    avg: 0.375,
    any: 0.75,
  });
  const d = runDiagnostics(report, run, res);
  assert.deepEqual(d.mismatch, report.mismatch);
  const tags = Object.fromEntries(d.items.map((it) => [it.id, it.odtTags]));
  assert.deepEqual(tags['no-where'], ['WHERE_ERROR']);
  assert.deepEqual([tags.same, tags['no-sql'], tags.broken], [[], null, null]);
});

test(
  'quarry score prints the mismatch rates and --json ' + 'carries them; --mismatch-sql picks the SQL compared',
  async () => {
    const file = join(tempDir('quarry-mismatch-'), 'run.jsonl');
    writeFileSync(file, run.map((r) => JSON.stringify(r) + '\n').join(''));
    const quarry = (...argv: string[]) => runQuarry(argv);
    const text = await quarry('score', '--trajectories', file, '--panel', 'progress');
    assert.equal(text.code, 0, text.err);
    assert.match(
      text.out,
      /ODT structural mismatch rates \(Progress-SQL App\. E\.4, Table 8; the final SQL of each trajectory\):/,
    );
    assert.match(
      text.out,
      new RegExp(
        /\n {2}all: 4 of 6 compared {3}SELECT 50\.0% {2}JOIN 25\.0% {2}WHERE 25\.0% {2}GROUP 50\.0%/.source +
          / {3}Avg\. Err\. 37\.5% {3}any tag 75\.0%\n/.source,
      ),
    );
    assert.match(
      text.out,
      new RegExp(
        /\n {2}greedy: 2 of 2 compared {3}SELECT 0\.0% {2}JOIN 0\.0% {2}WHERE 50\.0% {2}GROUP 0\.0%/.source +
          / {3}Avg\. Err\. 12\.5%/.source,
      ),
    );
    assert.match(
      text.out,
      new RegExp(
        /tags: JOIN_MISSING 1 \(25\.0%\), JOIN_KEY_MISMATCH 1 \(25\.0%\), FROM_OR_JOIN_TABLE_MISMAT/.source +
          /CH 1 \(25\.0%\), WHERE_ERROR 1 \(25\.0%\), SELECT_ERROR 2 \(50\.0%\)/.source,
      ),
    );
    assert.match(text.out, /not compared: 1 without SQL, 1 prediction\(s\) not parsed/);

    const json = await quarry(
      'score',
      '--trajectories',
      file,
      '--panel',
      'progress',
      '--json',
      '--mismatch-sql',
      'first',
    );
    assert.equal(json.code, 0, json.err);
    const m = JSON.parse(json.out).mismatch;
    assert.equal(m.sql, 'first');
    assert.equal(m.scopes[0].average, 0.375, 'single-turn: the first SQL is the final one');
    const bad = await quarry('score', '--trajectories', file, '--panel', 'progress', '--mismatch-sql', 'last');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--mismatch-sql must be one of final, first, got 'last'/);
  },
);
