// Tests of rewards/odtFeedback: odtFeedback: null for a SQL with the gold result, tagged App. F feedback otherwise;
// odtFeedback: same structure, wrong result → the no-structural-issue message; unparseable → fallback
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createOdtFeedback,
  createResultJudge,
  NO_STRUCTURAL_ISSUE_FEEDBACK,
  odtFeedback,
} from '../../../src/core/agent/feedback';
import { FALLBACK_FEEDBACK } from '../../../src/core/rewards/odt';
import { progressProtocol } from '../../../src/core/agent/protocols/progress';
import { introspectSchema } from '../../../src/core/db/schema';
import type { Task } from '../../../src/core/agent/types';
import { buildDb } from '../../helpers/fixtures';

const db = buildDb('progress-lenses');
const GOLD =
  'SELECT s.supplier_name, AVG(cl.price) AS average_price FROM contact_lenses cl JOIN suppliers s ON ' +
  's.supplier_id = cl.supplier_id JOIN feedback f ON cl.lens_id = f.lens_id WHERE f.rating >= 4 GROUP BY ' +
  's.supplier_name HAVING COUNT(cl.lens_id) > 0;';
const ROUND1 =
  'SELECT t1.lens_name, AVG(t1.price) AS average_price FROM contact_lenses t1 JOIN suppliers t2 ON ' +
  't1.supplier_id = t2.supplier_id JOIN feedback t3 ON t1.lens_id = t3.lens_id JOIN order_items t4 ON ' +
  't1.lens_id = t4.lens_id WHERE t3.rating >= 4 GROUP BY t1.lens_name HAVING COUNT(DISTINCT ' +
  't4.order_item_id) > 0;';
const ROUND3 =
  'SELECT s.supplier_name, AVG(cl.price) AS average_price FROM contact_lenses cl JOIN suppliers s ON ' +
  'cl.supplier_id = s.supplier_id JOIN feedback f ON cl.lens_id = f.lens_id WHERE f.rating >= 4 GROUP BY ' +
  's.supplier_name HAVING COUNT(cl.lens_id) > 0;';
const task: Task = { question: 'names and average prices of lenses of highly-rated suppliers', dbPath: db, gold: GOLD };

test('odtFeedback: null for a SQL with the gold result, tagged App. F feedback otherwise', () => {
  const fb = createOdtFeedback();
  assert.equal(fb(ROUND3, task), null);
  // an equivalent query written differently also returns the gold rows: the rollout stops, whatever its structure
  assert.equal(
    fb(
      'SELECT supplier_name, avg(price) FROM suppliers JOIN contact_lenses USING (supplier_id) WHERE ' +
        'lens_id IN (SELECT lens_id FROM feedback WHERE rating >= 4) GROUP BY supplier_name',
      task,
    ),
    null,
  );
  const text = fb(ROUND1, task);
  assert.ok(text);
  assert.match(text, /^Feedback: your previous SQL has structural issues: SELECT_ERROR, GROUP_BY_ERROR, /);
  assert.match(text, /Revise your previous answer using these issues\. Revise your previous answer for SQLite\./);
  assert.equal(fb.goldTreesBuilt(), 1);
  fb(ROUND1, task);
  assert.equal(fb.goldTreesBuilt(), 1, 'the gold tree is built once per (database, gold)');
});

test('odtFeedback: same structure, wrong result → the no-structural-issue message; unparseable → fallback', () => {
  const fb = createOdtFeedback();
  assert.equal(fb(ROUND3.replace('>= 4', '>= 5'), task), NO_STRUCTURAL_ISSUE_FEEDBACK);
  assert.equal(fb('SELECT supplier_name FROM suppliers WHERE', task), FALLBACK_FEEDBACK);
  assert.throws(() => fb(ROUND3, { ...task, gold: undefined }), /gold SQL/);
});

test('the result judge: match, difference, failing prediction, and a runaway query killed on timeout', () => {
  const judge = createResultJudge({ timeoutMs: 1500 });
  assert.deepEqual(judge(ROUND3, GOLD, db), { correct: true, reason: 'match', detail: null });
  assert.equal(judge(ROUND1, GOLD, db).correct, false);
  const broken = judge('SELECT nope FROM suppliers', GOLD, db);
  assert.equal(broken.correct, false);
  assert.equal(broken.reason, 'pred-error');
  assert.match(broken.detail ?? '', /no such column: nope/);
  const runaway = judge(
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r',
    GOLD,
    db,
  );
  assert.equal(runaway.correct, null);
  assert.equal(runaway.reason, 'judge-timeout');
  const missing = createResultJudge({ workerPath: '/nonexistent/judgeWorker.js' })(ROUND3, GOLD, db);
  assert.equal(missing.reason, 'judge-failed');
  // an undecidable verdict is never read as "correct": feedback still comes
  const fb = createOdtFeedback({ judge: () => ({ correct: null, reason: 'judge-timeout', detail: null }) });
  assert.equal(fb(ROUND3, task), NO_STRUCTURAL_ISSUE_FEEDBACK);
});

test(
  'the progress protocol uses odtFeedback: tagged feedback ' + 'after round 1, the rollout ends at the matching round',
  () => {
    const session = progressProtocol.create({
      task,
      config: { ...progressProtocol.defaults },
      schema: introspectSchema(db, { sampleRows: 0 }),
      feedback: odtFeedback,
    });
    const a1 = session.parse(`<think>join and group</think> <sql>${ROUND1}</sql>`);
    const r1 = session.respond(a1, null, 3);
    assert.equal(r1.done, false);
    assert.match(
      r1.observations[0].content,
      /^Feedback: your previous SQL has structural issues: .*SELECT_ERROR.*GROUP_BY_ERROR/,
    );
    const a3 = session.parse(`<think>fixed</think> <sql>${ROUND3}</sql>`);
    const r3 = session.respond(a3, null, 1);
    assert.equal(r3.done, true);
    assert.equal(r3.end, 'answer');
    assert.equal(r3.finalSql, ROUND3.trim());
  },
);
