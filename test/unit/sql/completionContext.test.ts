// Completion by context in a SQL document: tables after FROM/JOIN and commas of a FROM list, a table's columns after
// `alias.` or `table.` (aliases from the whole statement, before or after the cursor), everything elsewhere with the
// statement's own tables' columns first; and the schema's names each context offers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  completionContext,
  completionEntries,
  tableAliases,
  type CompletionContext,
} from '../../../src/core/sql/completionContext';
import type { SchemaInfo, TableInfo } from '../../../src/core/db/schema/types';

/** The context at the `|` in `text`. */
function at(text: string): CompletionContext {
  const offset = text.indexOf('|');
  return completionContext(text.slice(0, offset) + text.slice(offset + 1), offset);
}

test('after FROM, JOIN and a comma of a FROM list a table is expected', () => {
  assert.deepEqual(at('SELECT * FROM |'), { kind: 'table' });
  assert.deepEqual(at('SELECT * FROM tr|'), { kind: 'table' }, 'the word being typed does not count');
  assert.deepEqual(at('SELECT * FROM trip t JOIN |'), { kind: 'table' });
  assert.deepEqual(at('select * from trip t left join sta|'), { kind: 'table' });
  assert.deepEqual(at('SELECT * FROM trip, |'), { kind: 'table' });
  assert.equal(at('SELECT id, | FROM trip').kind, 'any', 'a comma in the SELECT list is not a FROM list');
  assert.equal(at('SELECT * FROM trip WHERE id IN (1, |)').kind, 'any');
  assert.equal(at('SELECT * FROM trip WHERE |').kind, 'any');
});

test('after alias. or table. the columns of that table are expected, aliases read from the whole statement', () => {
  assert.deepEqual(at('SELECT t.| FROM trip t'), { kind: 'column', qualifier: 't', table: 'trip' });
  assert.deepEqual(at('SELECT t.dur| FROM trip AS t'), { kind: 'column', qualifier: 't', table: 'trip' });
  assert.deepEqual(at('SELECT * FROM trip t JOIN station s ON s.|'), {
    kind: 'column',
    qualifier: 's',
    table: 'station',
  });
  assert.deepEqual(at('SELECT trip.| FROM trip'), { kind: 'column', qualifier: 'trip', table: 'trip' });
  assert.deepEqual(at('SELECT "T".| FROM "trip" "T"'), { kind: 'column', qualifier: 'T', table: 'trip' });
  // Another statement's alias does not leak in.
  assert.deepEqual(at('SELECT * FROM station t;\nSELECT t.| FROM trip t'), {
    kind: 'column',
    qualifier: 't',
    table: 'trip',
  });
  assert.deepEqual(at('SELECT s.| FROM trip t;\nSELECT * FROM station s'), {
    kind: 'column',
    qualifier: 's',
    table: 's',
  });
});

test('the statement tables and aliases, with keywords never taken for an alias', () => {
  const { tables, aliases } = tableAliases('SELECT * FROM trip LEFT JOIN station s ON 1 WHERE x, weather AS w');
  assert.deepEqual(tables, ['trip', 'station']);
  assert.equal(aliases.get('s'), 'station');
  assert.equal(aliases.get('left'), undefined);
  assert.equal(tableAliases('SELECT * FROM main.trip t').aliases.get('t'), 'trip');
  assert.deepEqual(tableAliases('SELECT * FROM a, b bb, c').tables, ['a', 'b', 'c']);
});

const table = (name: string, columns: string[], rowCount = 3): TableInfo => ({
  name,
  kind: 'table',
  columns: columns.map((c, i) => ({
    name: c,
    type: i === 0 ? 'INTEGER' : 'TEXT',
    notNull: false,
    pkIndex: i === 0 ? 1 : 0,
  })),
  primaryKey: [columns[0]],
  foreignKeys: [],
  rowCount,
  sampleRows: [],
  sql: '',
});
const schema: SchemaInfo = {
  tables: [table('trip', ['id', 'duration', 'start_station'], 9959), table('station', ['id', 'name'])],
};
const labels = (ctx: CompletionContext) => completionEntries(schema, ctx).map((e) => `${e.kind}:${e.label}`);

test('each context offers the schema names that fit it', () => {
  assert.deepEqual(labels(at('SELECT * FROM |')), ['table:trip', 'table:station'], 'after FROM: tables only');
  assert.deepEqual(labels(at('SELECT s.| FROM trip t JOIN station s')), ['column:id', 'column:name']);
  assert.deepEqual(labels(at('SELECT TRIP.| FROM trip')), ['column:id', 'column:duration', 'column:start_station']);
  assert.deepEqual(
    labels(at('SELECT x.| FROM trip')),
    [],
    'an unknown qualifier offers nothing rather than everything',
  );
  const any = completionEntries(schema, at('SELECT | FROM station'));
  assert.equal(any.length, 2 + 5, 'elsewhere: every table and column');
  const first = [...any].sort((a, b) => (a.sortText < b.sortText ? -1 : 1)).slice(0, 2);
  assert.deepEqual(
    first.map((e) => `${e.table}.${e.label}`),
    ['station.id', 'station.name'],
    "the statement's own tables' columns come first",
  );
  assert.equal(completionEntries(schema, { kind: 'table' })[0].detail, 'table · 9,959 rows');
});
