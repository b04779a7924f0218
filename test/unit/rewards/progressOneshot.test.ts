// Progress-SQL App. E.1's single-turn one-shot baseline reward as a built-in panel (`progress-oneshot`).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { listPanels, loadPanel, registerBuiltins, scorePanel } from '../../../src/core/rewards';
import { newPool, newResources, schoolDb, trajectory } from './fixtures';

const pool = newPool();
after(() => pool.close());
const res = newResources(pool);

const GOLD = 'SELECT name FROM student WHERE age > 20';

function oneShot(text: string, sql: string | null) {
  return trajectory({
    protocol: 'progress',
    gold: GOLD,
    finalSql: sql,
    maxTurns: 1,
    turns: [{ assistant: text, kind: sql === null ? 'invalid' : 'execute', sql }],
  });
}

const score = async (text: string, sql: string | null) => {
  const r = await scorePanel(
    loadPanel('progress-oneshot'),
    { goldSql: GOLD, dbPath: schoolDb, trajectory: oneShot(text, sql) },
    res,
  );
  return { total: r.total, terms: Object.fromEntries(r.terms.map((t) => [t.name, t.contribution])) };
};

test(
  'App. E.1: 2.0 if the result matches the gold, 0.5 if the SQL is executable, 0.5 if the output follows ' +
    'the format',
  async () => {
    // App. E.1: "The single-turn baseline generates one SQL prediction per rollout and assigns a score of 2.0 if the
    // generated SQL matches the gold execution result, 0.5 if the SQL is executable, and 0.5 if the output follows the
    // required format."
    registerBuiltins();
    assert.ok(listPanels().includes('progress-oneshot'));
    const panel = loadPanel('progress-oneshot');
    assert.equal(panel.source, 'Progress-SQL App. E.1');
    assert.equal(
      panel.mode,
      loadPanel('progress').mode,
      'the comparator of the progressive reward it is ablated against',
    );
    assert.deepEqual(
      panel.terms.map((t) => [t.name, t.definition.id, t.weight]),
      [
        ['exec', 'exec.match', 2],
        ['executable', 'sql.executable', 0.5],
        ['fmt', 'progress.format', 0.5],
      ],
    );
    assert.deepEqual(await score(`<think>older than 20</think> <sql>${GOLD}</sql>`, GOLD), {
      total: 3,
      terms: { exec: 2, executable: 0.5, fmt: 0.5 },
    });
    assert.deepEqual(
      await score('<think>all</think> <sql>SELECT name FROM student</sql>', 'SELECT name FROM student'),
      {
        total: 1,
        terms: { exec: 0, executable: 0.5, fmt: 0.5 },
      },
    );
    assert.deepEqual(await score('<think>typo</think> <sql>SELECT nme FROM student</sql>', 'SELECT nme FROM student'), {
      total: 0.5,
      terms: { exec: 0, executable: 0, fmt: 0.5 },
    });
    // Right and executable, but with text outside the tags: the format half-point is lost, nothing else.
    assert.deepEqual(await score(`Here it is: <sql>${GOLD}</sql>`, GOLD), {
      total: 2.5,
      terms: { exec: 2, executable: 0.5, fmt: 0 },
    });
    assert.deepEqual(await score('I do not know.', null), { total: 0, terms: { exec: 0, executable: 0, fmt: 0 } });
  },
);
