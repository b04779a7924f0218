// Tests of rewards/progress: progress panel: Table 4 weights, terms named as the paper names them; App. G trajectory
// scored: format 0.5, keep 0.5, late 2·0.5² (k* = 3), align = Δ > 0
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadPanel,
  scorePanel,
  scorePanelDetailed,
  type PanelResult,
  type ScoringInput,
} from '../../../src/core/rewards';
import { alignReward, checkProgressFormat, PROGRESS_PANEL } from '../../../src/core/rewards/progress';
import { compareOdt } from '../../../src/core/rewards/odt';
import { introspectSchema } from '../../../src/core/db/schema';
import { buildDb } from '../../helpers/fixtures';
import { schoolDb, newPool, newResources, trajectory, type TurnSpec } from './fixtures';

const pool = newPool();
after(() => pool.close());
const res = newResources(pool);
const lensDb = buildDb('progress-lenses');

const close = (a: number, b: number, msg?: string) => assert.ok(Math.abs(a - b) < 1e-9, `${msg ?? ''} ${a} ≉ ${b}`);
const term = (r: PanelResult, name: string) => {
  const t = r.terms.find((x) => x.name === name);
  assert.ok(t, `term ${name}`);
  return t;
};

/** A Progress-SQL episode: one <think>/<sql> turn per SQL. */
function episode(sqls: Array<string | null>, opts: { assistant?: string[]; dbPath?: string } = {}) {
  const turns: TurnSpec[] = sqls.map((sql, i) => ({
    assistant: opts.assistant?.[i] ?? `<think>step ${i + 1}</think>\n<sql>${sql ?? ''}</sql>`,
    kind: sql === null ? 'invalid' : 'execute',
    sql,
  }));
  return trajectory({
    protocol: 'progress',
    turns,
    finalSql: sqls[sqls.length - 1] ?? null,
    dbPath: opts.dbPath,
    maxTurns: 4,
  });
}

const score = (input: Partial<ScoringInput> & { goldSql: string }) =>
  scorePanel(loadPanel('progress'), { dbPath: schoolDb, ...input }, res);

const G_GOLD =
  'SELECT s.supplier_name, AVG(cl.price) AS average_price FROM contact_lenses cl JOIN suppliers s ON ' +
  's.supplier_id = cl.supplier_id JOIN feedback f ON cl.lens_id = f.lens_id WHERE f.rating >= 4 GROUP BY ' +
  's.supplier_name HAVING COUNT(cl.lens_id) > 0;';
const G_ROUNDS = [
  'SELECT t1.lens_name, AVG(t1.price) AS average_price FROM contact_lenses t1 JOIN suppliers t2 ON ' +
    't1.supplier_id = t2.supplier_id JOIN feedback t3 ON t1.lens_id = t3.lens_id JOIN order_items t4 ON ' +
    't1.lens_id = t4.lens_id WHERE t3.rating >= 4 GROUP BY t1.lens_name HAVING COUNT(DISTINCT ' +
    't4.order_item_id) > 0;',
  'SELECT s.supplier_name, AVG(cl.price) AS average_price FROM contact_lenses cl JOIN suppliers s ON ' +
    'cl.supplier_id = s.supplier_id JOIN feedback f ON cl.lens_id = f.lens_id JOIN order_items oi ON ' +
    'cl.lens_id = oi.lens_id JOIN sales sa ON oi.order_item_id = sa.order_id WHERE f.rating >= 4 GROUP BY ' +
    's.supplier_name;',
  'SELECT s.supplier_name, AVG(cl.price) AS average_price FROM contact_lenses cl JOIN suppliers s ON ' +
    'cl.supplier_id = s.supplier_id JOIN feedback f ON cl.lens_id = f.lens_id WHERE f.rating >= 4 GROUP BY ' +
    's.supplier_name HAVING COUNT(cl.lens_id) > 0;',
];

test('progress panel: Table 4 weights, terms named as the paper names them', () => {
  const p = loadPanel('progress');
  assert.deepEqual(
    p.terms.map((t) => [t.name, t.term, t.weight]),
    [
      ['fmt', 'progress.format', 0.5],
      ['exec', 'progress.exec', 1],
      ['late', 'progress.late', 2],
      ['align', 'progress.align', 1],
    ],
  );
  assert.deepEqual(
    p.terms.map((t) => t.params),
    [{}, { keep: 0.5, recover: 0.25, deteriorate: -0.25 }, { gamma: 0.5 }, { positive: 1, negative: -0.25 }],
  );
  assert.equal(PROGRESS_PANEL.name, 'progress');
});

test('App. G trajectory scored: format 0.5, keep 0.5, late 2·0.5² (k* = 3), align = Δ > 0', async () => {
  const r = await scorePanel(
    loadPanel('progress'),
    { goldSql: G_GOLD, dbPath: lensDb, trajectory: episode(G_ROUNDS, { dbPath: lensDb }) },
    res,
  );
  assert.equal(term(r, 'fmt').contribution, 0.5);
  assert.equal(term(r, 'exec').value, 0.5);
  assert.equal(term(r, 'late').value, 0.25);
  assert.equal(term(r, 'late').contribution, 0.5);
  assert.match(term(r, 'late').explanation, /k\* = 3/);
  const schema = introspectSchema(lensDb, { sampleRows: 0 });
  const delta = compareOdt(G_ROUNDS[2], G_GOLD, { schema }).F - compareOdt(G_ROUNDS[0], G_GOLD, { schema }).F;
  assert.ok(delta > 0);
  close(term(r, 'align').value, delta);
  close(r.total, 0.5 + 0.5 + 0.5 + delta);
  for (const t of r.terms) close(t.contribution, t.weight * t.value);
});

test('late: 2.0·0.5^(k*−1) for the first correct turn; 0 when no turn is correct', async () => {
  const gold = 'SELECT name FROM student WHERE age > 20';
  const late = async (sqls: string[]) =>
    term(await score({ goldSql: gold, trajectory: episode(sqls) }), 'late').contribution;
  assert.equal(await late([gold]), 2);
  assert.equal(await late(['SELECT name FROM student', gold]), 1);
  assert.equal(await late(['SELECT 1', 'SELECT 2', gold]), 0.5);
  assert.equal(await late(['SELECT 1', 'SELECT 2', 'SELECT 3', gold]), 0.25);
  assert.equal(await late(['SELECT 1', 'SELECT 2']), 0);
  // the first success counts, even if a later turn drifts away again
  assert.equal(await late(['SELECT 1', gold, 'SELECT 3']), 1);
});

test('exec: keep 0.5, recover 0.25, deteriorate −0.25, otherwise 0 (first vs final SQL)', async () => {
  const gold = 'SELECT name FROM student';
  const exec = async (sqls: Array<string | null>) =>
    term(await score({ goldSql: gold, trajectory: episode(sqls) }), 'exec');
  assert.equal((await exec(['SELECT age FROM student', 'SELECT name FROM student'])).value, 0.5);
  assert.equal((await exec(['SELECT nme FROM student', 'SELECT name FROM student'])).value, 0.25);
  assert.equal((await exec(['SELECT age FROM student', 'SELECT nme FROM student'])).value, -0.25);
  assert.equal((await exec(['SELECT nme FROM student', 'SELEC name'])).value, 0);
  assert.equal(
    (await exec(['SELECT name FROM student', null])).value,
    -0.25,
    'a final turn with no SQL is not executable',
  );
  // executable in between does not matter: only the endpoints
  assert.equal((await exec(['SELECT nme FROM student', 'SELECT 1', 'SELECT nme FROM student'])).value, 0);
  assert.match((await exec(['SELECT nme FROM student', 'SELECT name FROM student'])).explanation, /recover/);
});

test(
  'exec (§4.2, eq. 3): E(y) is "executed by the database engine without syntax or runtime errors" — the SQL ' +
    'as written',
  async () => {
    const gold = 'SELECT name FROM student';
    // Spider's evaluation joins "! =" into "!="; the engine itself rejects "age ! = 3". In spider mode the rewrite
    // makes
    // it
    // run, but eq. 3 asks whether y itself executes: an executable first SQL followed by this one deteriorates.
    const broken = 'SELECT name FROM student WHERE age ! = 3';
    const r = await scorePanel(
      loadPanel('progress'),
      { goldSql: gold, dbPath: schoolDb, mode: 'spider', trajectory: episode(['SELECT age FROM student', broken]) },
      res,
    );
    assert.equal(term(r, 'exec').value, -0.25);
  },
);

test(
  'align: ω⁺·Δ when the final SQL is closer to the gold, ω⁻ = −0.25 when it is not (incl. one-turn ' + 'trajectories)',
  async () => {
    const gold = 'SELECT name FROM student WHERE age > 20 ORDER BY name';
    const align = async (sqls: Array<string | null>) =>
      term(await score({ goldSql: gold, trajectory: episode(sqls) }), 'align');
    const first = 'SELECT id FROM teacher';
    const better = 'SELECT name FROM student WHERE age > 20';
    const up = await align([first, better]);
    close(up.value, compareOdt(better, gold).F - compareOdt(first, gold).F);
    assert.ok(up.value > 0);
    assert.equal((await align([better, first])).value, -0.25);
    assert.equal((await align([better, better])).value, -0.25, 'Δ = 0 is stagnation');
    assert.equal((await align([gold])).value, -0.25, 'one SQL: Δ = 0');
    assert.equal((await align([null, better])).value > 0, true, 'a missing first SQL has F = 0');
    // a memory-retrieval turn (MTSQL-R1) is not an SQL attempt: y(1) is the first turn with an action that writes SQL
    const withMemory = trajectory({
      protocol: 'mtsqlr1',
      finalSql: better,
      turns: [
        { assistant: '<tool_call>memory</tool_call>', kind: 'memory', sql: null },
        { assistant: `<think>a</think><sql>${first}</sql>`, sql: first },
        { assistant: `<think>b</think><sql>${better}</sql>`, sql: better },
      ],
    });
    close(term(await score({ goldSql: gold, trajectory: withMemory }), 'align').value, up.value);
    const bare = await score({ goldSql: gold, predSql: better });
    assert.equal(term(bare, 'align').value, -0.25);
    assert.match(term(bare, 'align').explanation, /one SQL only/);
  },
);

test('align: an unparseable SQL keeps its lexical half (F = F_lex / 2)', async () => {
  const gold = 'SELECT name FROM student WHERE age > 20';
  const broken = 'SELECT name FROM student WHERE age >';
  const r = await scorePanelDetailed(
    loadPanel('progress'),
    { goldSql: gold, dbPath: schoolDb, trajectory: episode([broken, gold]) },
    res,
  );
  const data = r.details[3].data as {
    delta: number;
    first: { F: number; struct: number; lexical: number; parsed: boolean };
  };
  assert.equal(data.first.parsed, false);
  assert.equal(data.first.struct, 0);
  close(data.first.F, data.first.lexical / 2);
  close(data.delta, 1 - data.first.F);
  assert.equal(term(r, 'exec').value, 0.25, 'recovered from a failing first SQL');
});

test('fmt: the final output must be exactly <think>…</think> <sql>…</sql>', async () => {
  assert.equal(checkProgressFormat('<think>a</think>\n<sql>SELECT 1</sql>').ok, true);
  assert.equal(checkProgressFormat('  <think>a</think><sql>SELECT 1</sql>\n').ok, true);
  assert.equal(checkProgressFormat('Sure! <think>a</think><sql>SELECT 1</sql>').ok, false);
  assert.equal(checkProgressFormat('<think>a</think><sql>SELECT 1</sql> done').ok, false);
  assert.equal(checkProgressFormat('<sql>SELECT 1</sql><think>a</think>').ok, false);
  assert.equal(checkProgressFormat('<think>a</think><sql>SELECT 1</sql><sql>SELECT 2</sql>').ok, false);
  assert.equal(checkProgressFormat('<think>a</think><sql> </sql>').ok, false);
  assert.equal(checkProgressFormat('<think>a<sql>SELECT 1</sql>').ok, false);
  assert.equal(checkProgressFormat('<sql>SELECT 1</sql>').ok, false);
  const gold = 'SELECT name FROM student';
  const fmt = async (assistant: string[]) =>
    term(
      await score({
        goldSql: gold,
        trajectory: episode(
          assistant.map(() => gold),
          { assistant },
        ),
      }),
      'fmt',
    );
  assert.equal((await fmt(['<think>x</think> <sql>SELECT name FROM student</sql>'])).contribution, 0.5);
  // only the final output is checked
  assert.equal((await fmt(['oops', '<think>x</think> <sql>SELECT name FROM student</sql>'])).contribution, 0.5);
  assert.equal(
    (await fmt(['<think>x</think> <sql>SELECT name FROM student</sql>', 'SELECT name FROM student'])).contribution,
    0,
  );
});

test('alignReward is non-decreasing in Δ and constant ω⁻ for Δ ≤ 0', () => {
  const deltas = Array.from({ length: 201 }, (_, i) => -1 + i / 100);
  for (let i = 1; i < deltas.length; i++)
    assert.ok(alignReward(deltas[i]) >= alignReward(deltas[i - 1]), `at Δ = ${deltas[i]}`);
  for (const d of deltas) {
    if (d <= 0) assert.equal(alignReward(d), -0.25);
    else close(alignReward(d), d);
  }
  assert.equal(alignReward(0.4, 2, -1), 0.8);
  assert.equal(alignReward(0, 2, -1), -1);
});

test("total R(Y) = R_fmt + R_exec + R_late + R_align, bounded by the paper's upper bound per k*", async () => {
  const gold = 'SELECT name FROM student WHERE age > 20';
  for (const [sqls, k] of [
    [[gold], 1],
    [['SELECT 1', gold], 2],
    [['SELECT 1', 'SELECT 2', gold], 3],
  ] as const) {
    const r = await score({ goldSql: gold, trajectory: episode([...sqls]) });
    const sum = r.terms.reduce((a, t) => a + t.contribution, 0);
    close(r.total, sum);
    // ω_fmt + ω_keep + ω_acc·γ^(k*−1) + max(ω⁺·1, ω⁻)
    assert.ok(r.total <= 0.5 + 0.5 + 2 * 0.5 ** (k - 1) + 1 + 1e-12, `k* = ${k}: ${r.total}`);
  }
});
