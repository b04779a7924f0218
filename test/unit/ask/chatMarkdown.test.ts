// What @quarry writes into the chat view, from a real episode on a real database, and how it picks the database.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode } from '../../../src/core/agent/loop';
import {
  codeBlock,
  endMarkdown,
  escapeMarkdown,
  inlineCode,
  resultTable,
  turnsMarkdown,
} from '../../../src/extension/chat/markdown';
import { dbNamedIn, resolveDatabase } from '../../../src/extension/chat/resolveDatabase';
import { buildDb } from '../../helpers/fixtures';
import { scriptedModel } from '../agent/envSupport';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const db = buildDb('bookshop');

test(
  'turnsMarkdown / endMarkdown: one numbered line per ' + 'turn with rows or the error; the ending in words',
  async () => {
    const record = await runEpisode({
      task: { question: 'q', dbPath: db },
      protocolName: 'skyrl',
      pool,
      config: { maxTurns: 5 },
      model: scriptedModel([
        "<think>a</think>\n<sql>SELECT name FROM author WHERE country = 'Canada'</sql>",
        '<think>b</think>\n<sql>SELECT nme FROM author</sql>',
        'no tags at all',
        '<think>c</think>\n<solution>SELECT count(*) FROM author</solution>',
      ]),
    });
    assert.equal(record.end, 'answer', record.error ?? '');
    const lines = turnsMarkdown(record).trimEnd().split('\n');
    assert.equal(lines[0], "1. runs `SELECT name FROM author WHERE country = 'Canada'` → 1 row");
    assert.match(lines[1], /^2\. runs `SELECT nme FROM author` → ✗ sql: no such column: nme$/);
    assert.match(lines[2], /^3\. ✗ invalid turn: /);
    assert.equal(lines[3], '4. answers');
    assert.match(endMarkdown(record), /^Answered in 4 turns \(\d+\.\d s\)\.$/);
    assert.equal(
      endMarkdown({ ...record, end: 'error', error: 'model error (unreachable): <b>down</b>' }),
      'Failed after 4 turns: model error (unreachable): \\<b\\>down\\</b\\>',
    );
    assert.equal(
      endMarkdown({ ...record, end: 'budget', finalSql: null }),
      'No answer within the turn budget (4 turns).',
    );
  },
);

test(
  'resultTable: header, escaped cells (pipes, markup), ' + 'NULL, cut long text, a count of what is not shown',
  async () => {
    const r = await pool.exec({
      db,
      sql: "SELECT 'a|b' AS x, NULL AS y, '<img src=x>' AS z UNION ALL SELECT '**bold**', 2, printf('%.200c', 'w')",
      maxRows: 10,
    });
    const md = resultTable(r.columns, r.rows, r.rowCount).split('\n');
    assert.equal(md[0], '| x | y | z |');
    assert.equal(md[1], '| --- | --- | --- |');
    assert.equal(md[2], '| a\\|b | *NULL* | \\<img src=x\\> |');
    assert.match(md[3], /^\| \\\*\\\*bold\\\*\\\* \| 2 \| w{79}… \|$/);
    assert.equal(md[5], '*2 rows.*');
    const many = await pool.exec({ db, sql: 'SELECT book_id FROM book ORDER BY book_id', maxRows: 3 });
    const cut = resultTable(many.columns, many.rows, many.rowCount, 3);
    assert.equal(cut.split('\n').filter((l) => l.startsWith('| ')).length, 5, 'header, rule and 3 rows');
    assert.match(cut, new RegExp(`\\*First 3 of ${many.rowCount} rows\\.\\*`));
    assert.equal(resultTable(['a'], [], 0), '*No rows.*\n');
  },
);

test('code spans and blocks hold any text: backticks inside cannot close them', () => {
  assert.equal(inlineCode('SELECT `a` FROM t'), '``SELECT `a` FROM t``');
  assert.equal(inlineCode('`x`'), '`` `x` ``');
  assert.equal(codeBlock('SELECT 1\n```\nnot closed', 'sql'), '````sql\nSELECT 1\n```\nnot closed\n````\n');
  assert.equal(codeBlock('SELECT 1\n\n', 'sql'), '```sql\nSELECT 1\n```\n');
  assert.equal(escapeMarkdown('[link](http://x) _a_ `b`'), '\\[link\\](http://x) \\_a\\_ \\`b\\`');
});

test(
  'the database: a #file reference, then a name in the prompt (file name, then unambiguous stem), then last ' +
    'used, then the only one',
  () => {
    const c = ['/w/data/clinic.sqlite', '/w/data/orchard.sqlite', '/w/archive/weather.sqlite'];
    assert.equal(dbNamedIn('How many doctors are in clinic.sqlite?', c), '/w/data/clinic.sqlite');
    assert.equal(dbNamedIn('apples in the ORCHARD db', c), '/w/data/orchard.sqlite');
    assert.equal(dbNamedIn('the clinical trials', c), undefined, 'whole words only');
    assert.equal(dbNamedIn('weather vs clinic', c), undefined, 'two named: neither');
    assert.equal(
      dbNamedIn('in data.sqlite', ['/a/data.sqlite', '/b/data.sqlite']),
      undefined,
      'same file name twice: ambiguous',
    );
    assert.deepEqual(resolveDatabase({ referenced: ['/x/ref.db'], prompt: 'clinic', candidates: c }), {
      path: '/x/ref.db',
      source: 'reference',
    });
    assert.deepEqual(resolveDatabase({ referenced: [], prompt: 'clinic patients', candidates: c, last: c[2] }), {
      path: c[0],
      source: 'prompt',
    });
    assert.deepEqual(resolveDatabase({ referenced: [], prompt: 'patients', candidates: c, last: c[2] }), {
      path: c[2],
      source: 'last',
    });
    assert.equal(
      resolveDatabase({ referenced: [], prompt: 'patients', candidates: c, last: '/gone.sqlite' }),
      undefined,
      'a last db no longer in the workspace is not used',
    );
    assert.deepEqual(resolveDatabase({ referenced: [], prompt: 'patients', candidates: [c[1]] }), {
      path: c[1],
      source: 'only',
    });
  },
);
