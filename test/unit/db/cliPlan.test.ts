// Tests of `quarry exec --plan`, spawning the bundled CLI on the bookshop sample: the indented tree with row counts
// and warnings, the JSON tree with --json, a write refused (exit 3) rather than planned, and the usage checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { buildDb, repoRoot } from '../../helpers/fixtures';

const cli = join(repoRoot, 'dist', 'cli.js');
const bookshop = buildDb('bookshop', {
  sql: readFileSync(join(repoRoot, 'media', 'samples', 'bookshop.sql'), 'utf8'),
});
const CORRELATED = 'SELECT title, (SELECT name FROM author a WHERE a.author_id = b.author_id) FROM book b';

function quarry(...argv: string[]) {
  assert.ok(existsSync(cli), 'run the build first');
  return spawnSync(process.execPath, [cli, ...argv], { encoding: 'utf8' });
}

test('quarry exec --plan prints the tree, the row counts and the warnings, and runs nothing', () => {
  const r = quarry('exec', '--db', bookshop, '--plan', '--sql', CORRELATED);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines[0], 'QUERY PLAN');
  assert.match(lines[1], /^\|--SCAN b {2}\[book: \d+ rows\]$/);
  assert.equal(lines[2], '`--CORRELATED SCALAR SUBQUERY 1');
  assert.match(lines[3], /^ {3}`--SEARCH a USING INTEGER PRIMARY KEY \(rowid=\?\) {2}\[author: \d+ rows\]$/);
  assert.equal(lines[5], 'Warnings:');
  assert.match(lines[6], /^- Correlated subquery: .* once for each row of book/);
  // No result rows: the title column's values never appear.
  assert.doesNotMatch(r.stdout, /Things Fall Apart/);
});

test('quarry exec --plan --json prints the tree as JSON', () => {
  const r = quarry('exec', '--db', bookshop, '--plan', '--json', '--sql', CORRELATED);
  assert.equal(r.status, 0, r.stderr);
  const plan = JSON.parse(r.stdout);
  assert.equal(plan.ok, true);
  assert.equal(plan.rowSource, 'count');
  assert.deepEqual(
    plan.nodes.map((n: { detail: string; kind: string }) => [n.detail, n.kind]),
    [
      ['SCAN b', 'scan'],
      ['CORRELATED SCALAR SUBQUERY 1', 'correlated-subquery'],
    ],
  );
  assert.equal(plan.nodes[1].children[0].table, 'author');
  assert.deepEqual(
    plan.warnings.map((w: { kind: string }) => w.kind),
    ['correlated-subquery'],
  );
});

test('quarry exec --plan refuses a write with exit 3, reports SQL errors with exit 1, and checks its flags', () => {
  const write = quarry('exec', '--db', bookshop, '--plan', '--sql', 'WITH x AS (SELECT 1) DELETE FROM book');
  assert.equal(write.status, 3, write.stdout + write.stderr);
  assert.match(write.stdout, /^statement rejected: it would write/);
  const json = quarry('exec', '--db', bookshop, '--plan', '--json', '--sql', 'DROP TABLE book');
  assert.equal(json.status, 3);
  assert.equal(JSON.parse(json.stdout).errorClass, 'rejected');
  const bad = quarry('exec', '--db', bookshop, '--plan', '--sql', 'SELECT nope FROM book');
  assert.deepEqual([bad.status, bad.stdout], [1, 'no such column: nope\n']);
  const usage = quarry('exec', '--db', bookshop, '--json', '--sql', 'SELECT 1');
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /--json goes with --plan/);
});
