// Tests of rewards/odt.cli: quarry odt --json: trees, scores, tags and feedback as one stable object; quarry odt:
// readable trees, matching, scores, tags with reasons, feedback
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { buildDb, repoRoot, tempDir } from '../../helpers/fixtures';
import { capture } from '../captureStream';

async function quarry(args: string[], cwd = repoRoot) {
  const out = capture();
  const err = capture();
  const code = await main(args, { stdout: out.stream, stderr: err.stream, cwd });
  return { code, stdout: out.text(), stderr: err.text() };
}

const GOLD =
  'SELECT s.supplier_name, AVG(cl.price) AS average_price FROM contact_lenses cl JOIN suppliers s ON ' +
  's.supplier_id = cl.supplier_id JOIN feedback f ON cl.lens_id = f.lens_id WHERE f.rating >= 4 GROUP BY ' +
  's.supplier_name HAVING COUNT(cl.lens_id) > 0;';
const ROUND2 =
  'SELECT s.supplier_name, AVG(cl.price) AS average_price FROM contact_lenses cl JOIN suppliers s ON ' +
  'cl.supplier_id = s.supplier_id JOIN feedback f ON cl.lens_id = f.lens_id JOIN order_items oi ON ' +
  'cl.lens_id = oi.lens_id JOIN sales sa ON oi.order_item_id = sa.order_id WHERE f.rating >= 4 GROUP BY ' +
  's.supplier_name;';

test('quarry odt --json: trees, scores, tags and feedback as one stable object', async () => {
  const r = await quarry(['odt', '--pred', ROUND2, '--gold', GOLD, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(o), [
    'pred',
    'gold',
    'predError',
    'goldError',
    'struct',
    'lexical',
    'F',
    'tags',
    'reasons',
    'feedback',
  ]);
  assert.equal(o.pred.type, 'ROOT');
  assert.equal(o.gold.children[0].type, 'SELECT');
  assert.deepEqual(o.gold.children[0].profile.tables, ['contact_lenses', 'feedback', 'suppliers']);
  assert.deepEqual(o.tags, ['JOIN_KEY_MISMATCH', 'FROM_OR_JOIN_TABLE_MISMATCH']);
  assert.ok(o.struct > 0 && o.struct < 1);
  assert.ok(Math.abs(o.F - (o.struct + o.lexical) / 2) < 1e-12);
  assert.match(
    o.feedback,
    /^Feedback: your previous SQL has structural issues: JOIN_KEY_MISMATCH, FROM_OR_JOIN_TABLE_MISMATCH, /,
  );
});

test('quarry odt: readable trees, matching, scores, tags with reasons, feedback', async () => {
  const r = await quarry(['odt', '--pred', ROUND2, '--gold', GOLD]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Predicted ODT:\n {2}ROOT\n {4}SELECT\n/);
  assert.match(r.stdout, /Gold ODT:/);
  assert.match(r.stdout, /tables: {2}\{contact_lenses \| feedback \| order_items \| sales \| suppliers\}/);
  assert.match(r.stdout, /F_struct {2}0\.\d{4}\nF_lex {5}0\.\d{4}\nF {9}0\.\d{4}/);
  assert.match(
    r.stdout,
    /JOIN_KEY_MISMATCH — JOIN keys or ON conditions are inconsistent\. \(join similarity 0\.50 < 0\.60\)/,
  );
  assert.match(r.stdout, /FROM_OR_JOIN_TABLE_MISMATCH — .*\(tables similarity 0\.60 < 0\.70\)/);
  const same = await quarry(['odt', '--pred', GOLD, '--gold', GOLD]);
  assert.match(same.stdout, /F_struct {2}1\.0000/);
  assert.match(same.stdout, /Tags: none\nFeedback: \(none: no structural issue\)/);
});

test('quarry odt: unparseable prediction, schema from --db, bad input', async () => {
  const broken = await quarry(['odt', '--pred', 'SELECT FROM WHERE', '--gold', 'SELECT name FROM singer', '--json']);
  assert.equal(broken.code, 0);
  const o = JSON.parse(broken.stdout);
  assert.equal(o.pred, null);
  assert.ok(typeof o.predError === 'string' && o.predError.length > 0);
  assert.equal(o.struct, 0);
  assert.match(o.feedback, /could not be parsed/);
  const db = buildDb('progress-lenses', { dir: tempDir('quarry-odt-cli-'), file: 'lenses.sqlite' });
  const pred =
    'SELECT supplier_name, price FROM suppliers JOIN contact_lenses ON suppliers.supplier_id = ' +
    'contact_lenses.supplier_id';
  const gold =
    'SELECT s.supplier_name, c.price FROM suppliers s JOIN contact_lenses c ON s.supplier_id = c.supplier_id';
  const withDb = JSON.parse((await quarry(['odt', '--pred', pred, '--gold', gold, '--db', db, '--json'])).stdout);
  assert.equal(withDb.struct, 1, 'bare columns resolved through the schema');
  const without = JSON.parse((await quarry(['odt', '--pred', pred, '--gold', gold, '--json'])).stdout);
  assert.ok(without.struct < 1, 'without a schema the bare names stay bare');
  const missing = await quarry(['odt', '--gold', gold]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--pred SQL is required/);
  const noDb = await quarry(['odt', '--pred', pred, '--gold', gold, '--db', join(tempDir(), 'none.sqlite')]);
  assert.equal(noDb.code, 2);
  assert.match(noDb.stderr, /no such file/);
});

test(
  'quarry odt from the built CLI bundle (dist/cli.js, built by scripts/build.mjs before the tests), as ' +
    'users run it',
  () => {
    const cli = join(repoRoot, 'dist', 'cli.js');
    const r = spawnSync(
      process.execPath,
      [cli, 'odt', '--pred', 'SELECT a FROM t', '--gold', 'SELECT a FROM t WHERE b = 1', '--json'],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).tags, ['WHERE_ERROR']);
  },
);
