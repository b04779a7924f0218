// Tests of rewards/reportTrajectory: odtView: identical queries are one matched node per side, nothing only on one
// side; odtView: a wrong WHERE and a missing GROUP BY mark the SELECT pair mismatching, with the differing items
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadPanel } from '../../../src/core/rewards';
import { trajectoryDiagnostics } from '../../../src/core/rewards/trajectoryReport';
import { odtView, type OdtViewNode } from '../../../src/core/rewards/odtView';
import { newPool, newResources, skyrlEpisode, trajectory } from './fixtures';

const pool = newPool();
after(() => pool.close());

function walk(n: OdtViewNode | null, out: OdtViewNode[] = []): OdtViewNode[] {
  if (!n) return out;
  out.push(n);
  for (const c of n.children) walk(c, out);
  return out;
}

test('odtView: identical queries are one matched node per side, nothing only on one side', () => {
  const v = odtView('SELECT name FROM teacher', 'select NAME from teacher');
  assert.equal(v.struct, 1);
  assert.deepEqual(v.tags, []);
  for (const side of [v.pred, v.gold]) {
    const nodes = walk(side);
    assert.ok(nodes.length >= 2);
    assert.ok(
      nodes.every((n) => n.status === 'match'),
      JSON.stringify(nodes.map((n) => n.status)),
    );
    assert.ok(nodes.flatMap((n) => n.fields).every((f) => f.items.every((i) => !i.onlyHere)));
  }
});

test('odtView: a wrong WHERE and a missing GROUP BY mark the SELECT pair mismatching, with the differing items', () => {
  const pred = 'SELECT class_id FROM student WHERE age > 20';
  const gold = 'SELECT class_id, count(*) FROM student WHERE age < 21 GROUP BY class_id';
  const v = odtView(pred, gold);
  assert.ok(v.struct < 1);
  const tags = v.tags.map((t) => t.tag);
  for (const t of ['WHERE_ERROR', 'GROUP_BY_MISSING', 'AGGREGATE_ERROR'] as const)
    assert.ok(tags.includes(t), tags.join());
  const predSelect = walk(v.pred).find((n) => n.type === 'SELECT')!;
  const goldSelect = walk(v.gold).find((n) => n.type === 'SELECT')!;
  assert.equal(predSelect.status, 'mismatch');
  assert.equal(goldSelect.status, 'mismatch');
  assert.ok(predSelect.tags.some((t) => t.tag === 'WHERE_ERROR'));
  const predWhere = predSelect.fields.find((f) => f.name === 'where')!;
  assert.equal(predWhere.low, true);
  assert.ok(predWhere.items.length === 1 && predWhere.items[0].onlyHere);
  const goldGroup = goldSelect.fields.find((f) => f.name === 'groupBy')!;
  assert.ok(goldGroup.items.length === 1 && goldGroup.items[0].onlyHere);
  assert.ok(goldSelect.flags.some((f) => f.name === 'groupBy' && f.differs));
  // Both tables are the same: not marked.
  assert.ok(predSelect.fields.find((f) => f.name === 'tables')!.items.every((i) => !i.onlyHere));
  assert.ok(v.feedback && v.feedback.length > 0);
});

test('odtView: a gold subquery the prediction lacks is a missing node on the gold side', () => {
  const v = odtView('SELECT name FROM student', 'SELECT name FROM student WHERE age > (SELECT avg(age) FROM student)');
  const missing = walk(v.gold).filter((n) => n.status === 'missing');
  assert.ok(missing.length >= 1, JSON.stringify(walk(v.gold).map((n) => [n.type, n.status])));
  assert.ok(missing[0].tags.some((t) => t.tag === 'SUBQUERY_MISSING'));
  assert.ok(walk(v.pred).every((n) => n.status !== 'missing'));
  assert.ok(v.tags.some((t) => t.tag === 'SUBQUERY_MISSING'));
});

test('odtView: a prediction that does not parse keeps the gold tree, says why, and has no predicted tree', () => {
  const v = odtView('SELEC name FROM', 'SELECT name FROM teacher');
  assert.equal(v.pred, null);
  assert.ok(v.predError);
  assert.ok(v.gold);
  assert.equal(v.struct, 0);
  assert.ok(walk(v.gold).every((n) => n.status === 'missing' && n.tags.length === 0));
});

const GOLD =
  "SELECT T1.name FROM student AS T1 JOIN class AS T2 ON T1.class_id = T2.id WHERE T2.title = 'Algebra' " +
  'ORDER BY T1.name';

test('trajectoryDiagnostics: sqltrail terms with explanations, verdict, clause rows with items, ODT', async () => {
  const rec = skyrlEpisode(['SELECT title FROM class'], 'SELECT name FROM student WHERE class_id = 1', {
    id: 'one',
    gold: GOLD,
    difficulty: 'medium',
  });
  const d = await trajectoryDiagnostics(rec, loadPanel('sqltrail'), newResources(pool));
  assert.equal(d.id, 'one');
  assert.equal(d.panel, 'sqltrail');
  assert.deepEqual(
    d.terms.map((t) => t.name),
    ['exec', 'turns', 'schema', 'bigram', 'syntax', 'format'],
  );
  assert.ok(d.terms.every((t) => t.explanation.length > 0));
  assert.equal(d.total, Math.round(d.terms.reduce((a, t) => a + t.contribution, 0) * 1e12) / 1e12);
  // Same rows (Ada, Ben): the gold orders by name and the prediction's id order is name order here.
  assert.deepEqual(d.exec, { correct: true, reason: 'match', detail: null });
  assert.equal(d.terms[0].contribution, 5);
  assert.equal(d.terms[0].passed, true);
  assert.equal(d.hardness, 'medium');
  assert.deepEqual(
    d.clauses!.rows.map((r) => r.clause),
    ['select', 'where', 'join', 'group', 'order'],
  );
  const join = d.clauses!.rows.find((r) => r.clause === 'join')!;
  assert.equal(join.pred.length, 0);
  assert.ok(join.gold.length > 0);
  assert.equal(join.f1, 0);
  assert.equal(d.clauses!.rows.find((r) => r.clause === 'group')!.f1, null);
  assert.ok(d.odt?.tags.some((t) => t.tag === 'JOIN_MISSING'));
  assert.equal(d.verification, null);
  assert.deepEqual(d.notes, []);
});

test('trajectoryDiagnostics: MTSQL-R1 verification verdicts per turn with their process reward', async () => {
  const sql = 'SELECT name FROM teacher';
  const rec = trajectory({
    id: 'mt',
    protocol: 'mtsqlr1',
    gold: sql,
    finalSql: sql,
    turns: [
      { assistant: 'propose', sql, mdp: ['PROPOSE', 'EXECUTE'], exec: { rowCount: 2 } },
      { assistant: 'verify', kind: 'execute', mdp: ['E-VERIFY'], verify: { exec: 'pass' } },
      { assistant: 'mverify', kind: 'memory', mdp: ['M-VERIFY'], verify: { memory: 'no_pass' } },
      { assistant: 'final', kind: 'answer', sql, mdp: ['FINALIZE'] },
    ],
  });
  const d = await trajectoryDiagnostics(rec, loadPanel('mtsqlr1'), newResources(pool));
  assert.deepEqual(
    d.terms.map((t) => t.name),
    ['ex', 'em', 'clause', 'verify'],
  );
  const v = d.verification!;
  assert.deepEqual(
    v.map((r) => [r.turn, r.kind, r.said, r.verdict]),
    [
      [1, 'E-VERIFY', 'pass', 'pass'],
      [2, 'M-VERIFY', 'no_pass', 'fail'],
    ],
  );
  // E-VERIFY: rows came back and the model said pass → 1; M-VERIFY: said fail on a perfect candidate → 1 − F1 = 0.
  assert.deepEqual(
    v.map((r) => r.value),
    [1, 0],
  );
  assert.equal(d.terms[3].value, 1);
  assert.ok(d.clauses!.rows.filter((r) => r.f1 !== null).every((r) => r.f1 === 1));
});

test('trajectoryDiagnostics: no final SQL and no gold are explained, not thrown', async () => {
  const noSql = trajectory({
    id: 'cut',
    turns: [{ assistant: '<think>hm' }],
    finalSql: null,
    end: 'budget',
    gold: 'SELECT 1',
  });
  const d = await trajectoryDiagnostics(noSql, loadPanel('skyrl'), newResources(pool));
  assert.equal(d.odt, null);
  assert.equal(d.clauses, null);
  assert.equal(d.exec!.correct, false);
  assert.equal(d.exec!.reason, 'missing-prediction');
  assert.match(d.notes.join(), /no final SQL \(episode ended with budget\)/);

  const noGold = trajectory({ id: 'ng', turns: [], finalSql: 'SELECT 1' });
  const e = await trajectoryDiagnostics(noGold, loadPanel('skyrl'), newResources(pool));
  assert.deepEqual(e.terms, []);
  assert.equal(e.exec, null);
  assert.match(e.notes.join(), /no gold SQL/);
});
