// Tests of datasets/loaders: parseDatasetSpec reads NAME:FILE and rejects anything else; spider: one task per item,
// database path by db_id, hardness from the gold query
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadDataset, parseDatasetSpec, DatasetError, evalModeOf } from '../../../src/core/datasets';
import { tempDir } from '../../helpers/fixtures';
import { buildDatasetDbs, datasetFixtures } from './dbs';

const dbDir = buildDatasetDbs();
const fixture = (name: string) => join(datasetFixtures, name);

test('parseDatasetSpec reads NAME:FILE and rejects anything else', () => {
  assert.deepEqual(parseDatasetSpec('spider:data/dev.json'), { name: 'spider', file: 'data/dev.json' });
  assert.deepEqual(parseDatasetSpec('cosql:C:/x.json'), { name: 'cosql', file: 'C:/x.json' });
  assert.deepEqual(parseDatasetSpec('BIRD:dev.json'), { name: 'bird', file: 'dev.json' });
  for (const bad of ['dev.json', 'wikisql:dev.json', 'spider:', ':dev.json']) {
    assert.throws(
      () => parseDatasetSpec(bad),
      (e: Error) => e instanceof DatasetError && /NAME:FILE\.json/.test(e.message),
      bad,
    );
  }
});

test('spider: one task per item, database path by db_id, hardness from the gold query', () => {
  const ds = loadDataset('spider', fixture('spider-dev.json'), dbDir);
  assert.equal(ds.tasks.length, 4);
  assert.deepEqual(ds.levels, ['easy', 'medium', 'hard', 'extra']);
  assert.equal(evalModeOf('spider'), 'spider');
  const t = ds.tasks[1];
  assert.equal(t.id, 'spider:spider-dev:1');
  assert.equal(t.index, 1);
  assert.equal(t.question, 'List the names of dogs.');
  assert.equal(t.gold, "SELECT name FROM pet WHERE kind = 'dog'");
  assert.equal(t.dbId, 'pets');
  assert.equal(t.dbPath, join(dbDir, 'pets', 'pets.sqlite'));
  assert.equal(t.history, undefined);
  assert.equal(t.evidence, undefined);
  // easy: one WHERE; extra: 3-table join + WHERE + ORDER BY (component1 = 4); hard: one nested subquery.
  assert.deepEqual(
    ds.tasks.map((x) => x.difficulty),
    ['easy', 'easy', 'extra', 'hard'],
  );
  assert.deepEqual(
    ds.tasks.map((x) => x.level),
    ['easy', 'easy', 'extra', 'hard'],
  );
});

test('spider: a tables.json beside the data file supplies the schema the hardness parse uses', () => {
  const dir = tempDir('quarry-ds-tables-');
  copyFileSync(fixture('spider-dev.json'), join(dir, 'dev.json'));
  // A schema without the pet table: the official parser then rejects the gold queries that use it.
  writeFileSync(
    join(dir, 'tables.json'),
    JSON.stringify([
      {
        db_id: 'pets',
        table_names_original: ['owner'],
        column_names_original: [
          [-1, '*'],
          [0, 'owner_id'],
          [0, 'name'],
          [0, 'city'],
          [0, 'age'],
        ],
        foreign_keys: [],
      },
    ]),
  );
  const ds = loadDataset('spider', join(dir, 'dev.json'), dbDir);
  assert.equal(ds.tasks[0].difficulty, 'easy');
  assert.equal(ds.tasks[1].difficulty, undefined, 'pet is not in tables.json, so the gold has no hardness');
  assert.equal(ds.tasks[1].level, null);
  assert.equal(ds.tasks[2].difficulty, 'extra', 'a db_id missing from tables.json falls back to the database');
});

test('spider variants: Spider-Syn questions are read from SpiderSynQuestion', () => {
  const dir = tempDir('quarry-ds-syn-');
  writeFileSync(
    join(dir, 'syn.json'),
    JSON.stringify([
      {
        db_id: 'pets',
        SpiderSynQuestion: 'Count the proprietors.',
        SpiderQuestion: 'How many owners?',
        query: 'SELECT count(*) FROM owner',
      },
    ]),
  );
  const ds = loadDataset('spider', join(dir, 'syn.json'), dbDir);
  assert.equal(ds.tasks[0].question, 'Count the proprietors.');
});

test('bird: evidence, SQL and BIRD difficulty as the report level', () => {
  const ds = loadDataset('bird', fixture('bird-dev.json'), dbDir);
  assert.equal(evalModeOf('bird'), 'bird');
  assert.deepEqual(ds.levels, ['simple', 'moderate', 'challenging']);
  assert.deepEqual(
    ds.tasks.map((t) => t.level),
    ['simple', 'moderate', 'challenging'],
  );
  assert.equal(ds.tasks[0].evidence, 'heavy refers to weight > 10');
  assert.equal(ds.tasks[1].evidence, undefined, 'empty evidence is left out');
  assert.equal(ds.tasks[0].gold, 'SELECT COUNT(*) FROM pet WHERE weight > 10');
  assert.equal(ds.tasks[2].dbPath, join(dbDir, 'pets', 'pets.sqlite'));
  assert.equal(ds.tasks[0].difficulty, 'easy', 'Spider hardness is still computed for the agent');
});

test('sparc and cosql: every turn is a task whose history holds the earlier questions with their gold SQL', () => {
  const sparc = loadDataset('sparc', fixture('sparc-dev.json'), dbDir);
  assert.equal(sparc.tasks.length, 5);
  assert.deepEqual(
    sparc.tasks.map((t) => t.id),
    ['sparc:sparc-dev:0:0', 'sparc:sparc-dev:0:1', 'sparc:sparc-dev:0:2', 'sparc:sparc-dev:1:0', 'sparc:sparc-dev:1:1'],
  );
  assert.deepEqual(
    sparc.tasks.map((t) => t.index),
    [0, 1, 2, 3, 4],
  );
  assert.deepEqual(
    sparc.tasks.map((t) => t.interaction),
    [0, 0, 0, 1, 1],
  );
  assert.deepEqual(sparc.tasks[0].history, []);
  assert.deepEqual(sparc.tasks[2].history, [
    { question: 'Show all owners.', sql: 'SELECT name FROM owner' },
    { question: 'Only those in Oslo.', sql: "SELECT name FROM owner WHERE city = 'Oslo'" },
  ]);
  assert.equal(sparc.tasks[2].question, 'How many are there?');
  assert.equal(sparc.tasks[2].gold, "SELECT count(*) FROM owner WHERE city = 'Oslo'");
  assert.deepEqual(
    sparc.tasks[4].history,
    [{ question: 'List the courses.', sql: 'SELECT title FROM course' }],
    'history does not leak across interactions',
  );
  assert.equal(sparc.tasks[4].dbId, 'school');
  const cosql = loadDataset('cosql', fixture('cosql-dev.json'), dbDir);
  assert.equal(cosql.tasks.length, 2);
  assert.equal(cosql.tasks[1].id, 'cosql:cosql-dev:0:1');
  assert.deepEqual(cosql.tasks[1].history, [
    { question: 'Who are the students in grade 10?', sql: 'SELECT name FROM student WHERE grade = 10' },
  ]);
});

function rejects(name: 'spider' | 'bird' | 'sparc' | 'cosql', content: string | null, pattern: RegExp, db = dbDir) {
  const dir = tempDir('quarry-ds-bad-');
  const file = join(dir, 'data.json');
  if (content !== null) writeFileSync(file, content);
  assert.throws(
    () => loadDataset(name, file, db),
    (e: Error) => {
      assert.ok(e instanceof DatasetError, `expected a DatasetError, got ${e}`);
      assert.match(e.message, pattern);
      return true;
    },
  );
}

test('clear errors: missing file, bad JSON, wrong shape, missing field at an index, missing database', () => {
  rejects('spider', null, /cannot read Spider file .*data\.json: no such file/);
  rejects('spider', '[{"db_id": ', /data\.json is not valid JSON/);
  rejects('spider', '{"db_id": "pets"}', /expected a JSON list of Spider items, found an object/);
  rejects(
    'spider',
    '[{"db_id": "pets", "question": "q", "query": "SELECT 1"}, 7]',
    /item 1 is a number, expected an object/,
  );
  rejects(
    'spider',
    '[{"db_id": "pets", "question": "q", "query": "SELECT 1"}, {"db_id": "pets", "question": "q"}]',
    /item 1 has no "query" field/,
  );
  rejects(
    'spider',
    '[{"db_id": "pets", "query": "SELECT 1"}]',
    /item 0 has no "question" field \(nor "SpiderSynQuestion"\)/,
  );
  rejects(
    'spider',
    '[{"db_id": 3, "question": "q", "query": "SELECT 1"}]',
    /item 0 field "db_id" is a number, expected a string/,
  );
  rejects('spider', '[{"db_id": "pets", "question": "q", "query": "  "}]', /item 0 field "query" is empty/);
  rejects('bird', '[{"db_id": "pets", "question": "q", "query": "SELECT 1"}]', /item 0 has no "SQL" field/);
  rejects(
    'bird',
    '[{"db_id": "pets", "question": "q", "SQL": "SELECT 1", "difficulty": "hard"}]',
    /item 0 field "difficulty" is 'hard', expected simple, moderate, challenging/,
  );
  rejects(
    'sparc',
    '[{"database_id": "pets", "interaction": [{"utterance": "a", "query": "SELECT 1"}, {"utterance": "b"}]}]',
    /interaction 0 turn 1 has no "query" field/,
  );
  rejects('cosql', '[{"db_id": "pets", "interaction": []}]', /interaction 0 has no "database_id" field/);
  rejects(
    'sparc',
    '[{"database_id": "pets", "interaction": "x"}]',
    /interaction 0 field "interaction" is a string, expected a list/,
  );
  rejects(
    'spider',
    '[{"db_id": "zoo", "question": "q", "query": "SELECT 1"}, {"db_id": "pets", "question": "q", "query": "SELECT 1"}]',
    /no database for db_id zoo in .* \(expected .*zoo[/\\]zoo\.sqlite\)/,
  );
  rejects('spider', '[]', /database directory .* does not exist/, join(dbDir, 'nowhere'));
  const emptyDb = tempDir('quarry-ds-empty-');
  mkdirSync(join(emptyDb, 'pets'));
  rejects('bird', '[{"db_id": "pets", "question": "q", "SQL": "SELECT 1"}]', /no database for db_id pets/, emptyDb);
});
