// Tests of rewards/panels: sqltrail bigram: the paper\'s student/teacher example scores 2/4; sqltrail schema: the
// paper\'s Employees/Salary vs Wages example scores 1/3
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadPanel,
  resolvePanel,
  scorePanel,
  scorePanelDetailed,
  type PanelResult,
  type ScoringInput,
} from '../../../src/core/rewards';
import { schoolDb, newPool, newResources, trajectory, skyrlEpisode } from './fixtures';

const pool = newPool();
after(() => pool.close());
const res = newResources(pool);

const term = (r: PanelResult, name: string) => {
  const t = r.terms.find((x) => x.name === name);
  assert.ok(t, `term ${name} in ${r.terms.map((x) => x.name).join(',')}`);
  return t;
};
const score = (panel: string, input: Partial<ScoringInput> & { goldSql: string }) =>
  scorePanel(loadPanel(panel), { dbPath: schoolDb, ...input }, res);

// ---- SQL-Trail worked examples (App. A.4) -------------------------------------------------------------------------

test("sqltrail bigram: the paper's student/teacher example scores 2/4", async () => {
  const r = await score('sqltrail', {
    goldSql: 'SELECT name FROM student',
    predSql: 'SELECT name FROM teacher',
    difficulty: 'simple',
  });
  assert.equal(term(r, 'bigram').value, 0.5);
  assert.match(term(r, 'bigram').explanation, /2 of 4/);
});

test("sqltrail schema: the paper's Employees/Salary vs Wages example scores 1/3", async () => {
  const r = await score('sqltrail', {
    goldSql: 'SELECT Salary FROM Employees',
    predSql: 'SELECT Wages FROM Employees',
    difficulty: 'simple',
  });
  assert.equal(term(r, 'schema').value, 1 / 3);
  assert.match(term(r, 'schema').explanation, /1 of 3.*missing salary.*extra wages/);
});

test(
  'sqltrail schema, eq. 10 (App. A.4): schema items are bare table and column names — student/teacher ' +
    'shares name, 1/3',
  async () => {
    const r = await score('sqltrail', {
      goldSql: 'SELECT name FROM student',
      predSql: 'SELECT name FROM teacher',
      difficulty: 'simple',
    });
    assert.equal(term(r, 'schema').value, 1 / 3);
  },
);

test('sqltrail: weights 5, 2, 1, 1, 1, 1 and total = Σ weight·value', async () => {
  const r = await score('sqltrail', {
    goldSql: 'SELECT name FROM student WHERE age > 20',
    predSql: 'SELECT name FROM student WHERE age > 20',
    difficulty: 'simple',
  });
  assert.deepEqual(
    r.terms.map((t) => [t.name, t.weight]),
    [
      ['exec', 5],
      ['turns', 2],
      ['schema', 1],
      ['bigram', 1],
      ['syntax', 1],
      ['format', 1],
    ],
  );
  assert.deepEqual(
    r.terms.map((t) => t.value),
    [1, 1, 1, 1, 1, 1],
  );
  assert.equal(r.total, 11);
  for (const t of r.terms) assert.equal(t.contribution, t.weight * t.value);
});

test('sqltrail exec and syntax: wrong result, failing SQL, timeout-free error message', async () => {
  const wrong = await score('sqltrail', {
    goldSql: 'SELECT name FROM student WHERE age > 20',
    predSql: 'SELECT name FROM student',
    difficulty: 'simple',
  });
  assert.equal(term(wrong, 'exec').value, 0);
  assert.match(term(wrong, 'exec').explanation, /4 rows vs gold 2 rows/);
  assert.equal(term(wrong, 'syntax').value, 1);
  const broken = await score('sqltrail', {
    goldSql: 'SELECT name FROM student',
    predSql: 'SELECT nme FROM student',
    difficulty: 'simple',
  });
  assert.equal(term(broken, 'exec').value, 0);
  assert.equal(term(broken, 'syntax').value, 0);
  assert.match(term(broken, 'syntax').explanation, /no such column: nme/);
});

test('sqltrail turns: simple t ≤ 2, medium t ≤ 3, hard/extra need a correct answer in t < T', async () => {
  const gold = 'SELECT name FROM student WHERE age > 20';
  const ep = (n: number, sol = gold) =>
    skyrlEpisode(
      Array.from({ length: n - 1 }, () => 'SELECT 1'),
      sol,
      { maxTurns: 5 },
    );
  const turns = async (difficulty: 'simple' | 'medium' | 'hard' | 'extra', n: number, sol = gold) =>
    term(await score('sqltrail', { goldSql: gold, trajectory: ep(n, sol), difficulty }), 'turns').value;
  assert.equal(await turns('simple', 2), 1);
  assert.equal(await turns('simple', 3), 0);
  assert.equal(await turns('medium', 3), 1);
  assert.equal(await turns('medium', 4), 0);
  assert.equal(await turns('hard', 4), 1);
  assert.equal(await turns('hard', 5), 0, 't = T is not < T');
  assert.equal(await turns('extra', 2, 'SELECT name FROM student'), 0, 'wrong answer earns no turn reward on extra');
  assert.equal(await turns('medium', 2, 'SELECT name FROM student'), 1, 'medium does not require correctness');
});

test(
  'sqltrail turns: difficulty from the trajectory, then ' + "from the gold's Spider hardness; T from the budget",
  async () => {
    const t = skyrlEpisode(['SELECT 1', 'SELECT 2'], 'SELECT name FROM student', { difficulty: 'easy' });
    const r = await score('sqltrail', { goldSql: 'SELECT name FROM student', trajectory: t });
    assert.equal(term(r, 'turns').value, 0);
    assert.match(term(r, 'turns').explanation, /simple: 3 turns > 2/);
    const r2 = await score('sqltrail', { goldSql: 'SELECT name FROM student', predSql: 'SELECT name FROM student' });
    assert.match(term(r2, 'turns').explanation, /simple \(Spider hardness of the gold\)/);
    const hard = skyrlEpisode(['SELECT 1', 'SELECT 2'], 'SELECT name FROM student', {
      difficulty: 'hard',
      maxTurns: 3,
    });
    const r3 = await score('sqltrail', { goldSql: 'SELECT name FROM student', trajectory: hard });
    assert.equal(term(r3, 'turns').value, 0);
    assert.match(term(r3, 'turns').explanation, /≥ budget 3/);
    const r4 = await score('sqltrail', { goldSql: 'SELECT name FROM student', trajectory: hard, turnBudget: 4 });
    assert.equal(term(r4, 'turns').value, 1);
  },
);

test('sqltrail format: final output needs a reasoning block and a <solution>', async () => {
  const ok = trajectory({
    protocol: 'sqltrail',
    finalSql: 'SELECT 1',
    turns: [{ assistant: '<reasoning>r</reasoning><solution>SELECT 1</solution>', kind: 'answer' }],
  });
  const bad = trajectory({
    protocol: 'sqltrail',
    finalSql: 'SELECT 1',
    turns: [{ assistant: '<reasoning>r</reasoning>SELECT 1', kind: 'answer' }],
  });
  const gold = 'SELECT 1';
  assert.equal(
    term(await score('sqltrail', { goldSql: gold, trajectory: ok, difficulty: 'simple' }), 'format').value,
    1,
  );
  const r = await score('sqltrail', { goldSql: gold, trajectory: bad, difficulty: 'simple' });
  assert.equal(term(r, 'format').value, 0);
  assert.match(term(r, 'format').explanation, /missing-solution/);
});

// ---- SkyRL-SQL §4.1 --------------------------------------------------------------------------------------------

test('skyrl: −1 invalid format, 0 valid but wrong, 1 valid and correct', async () => {
  const gold = 'SELECT name FROM student WHERE age > 20';
  const correct = await score('skyrl', { goldSql: gold, trajectory: skyrlEpisode(['SELECT * FROM student'], gold) });
  assert.equal(correct.total, 1);
  const wrong = await score('skyrl', { goldSql: gold, trajectory: skyrlEpisode([], 'SELECT name FROM student') });
  assert.equal(wrong.total, 0);
  const noThink = trajectory({
    protocol: 'skyrl',
    finalSql: gold,
    turns: [{ assistant: `<solution>${gold}</solution>`, kind: 'answer' }],
  });
  const invalid = await score('skyrl', { goldSql: gold, trajectory: noThink });
  assert.equal(invalid.total, -1);
  assert.match(term(invalid, 'format').explanation, /missing-think/);
  assert.equal(term(invalid, 'exec').value, 0, 'a correct SQL earns nothing once the format failed');
  assert.match(term(invalid, 'exec').explanation, /gated by 'format'/);
});

test('skyrl format: every intermediate turn needs one <sql>; the rollout must end in a <solution>', async () => {
  const gold = 'SELECT 1';
  const cases: Array<[string, ReturnType<typeof trajectory>]> = [
    [
      'missing-sql',
      trajectory({
        finalSql: gold,
        turns: [
          { assistant: '<think>a</think> hmm' },
          { assistant: `<think>b</think><solution>${gold}</solution>`, kind: 'answer' },
        ],
      }),
    ],
    [
      'multiple-sql',
      trajectory({
        finalSql: gold,
        turns: [
          { assistant: '<think>a</think><sql>SELECT 1</sql><sql>SELECT 2</sql>' },
          { assistant: `<think>b</think><solution>${gold}</solution>`, kind: 'answer' },
        ],
      }),
    ],
    [
      'missing-solution',
      trajectory({ finalSql: gold, end: 'budget', turns: [{ assistant: '<think>a</think><sql>SELECT 1</sql>' }] }),
    ],
    [
      'unbalanced-tags',
      trajectory({ finalSql: gold, turns: [{ assistant: `<think>a<solution>${gold}</solution>`, kind: 'answer' }] }),
    ],
    ['episode-error', trajectory({ finalSql: null, end: 'error', turns: [{ assistant: '' }] })],
  ];
  for (const [kind, t] of cases) {
    const r = await scorePanelDetailed(loadPanel('skyrl'), { goldSql: gold, dbPath: schoolDb, trajectory: t }, res);
    assert.equal(r.total, -1, kind);
    assert.equal(r.details[0].failure, kind);
  }
});

test(
  'skyrl format, SkyRL-SQL §4.1: "requiring <think> blocks indicating reasoning ... in each turn" (default ' +
    'protocol)',
  async () => {
    // The default skyrl protocol (thinking: false, App. A's prompt) asks for <think> in every turn: a right answer
    // without one is a format failure, -1, not +1.
    const gold = 'SELECT 1';
    const answer = [{ assistant: `<solution>${gold}</solution>`, kind: 'answer' as const }];
    for (const config of [{}, { thinking: false }]) {
      const noThink = trajectory({ finalSql: gold, config, turns: answer });
      const r = await scorePanelDetailed(
        loadPanel('skyrl'),
        { goldSql: gold, dbPath: schoolDb, trajectory: noThink },
        res,
      );
      assert.equal(r.total, -1, `config ${JSON.stringify(config)}`);
      assert.equal(r.details[0].failure, 'missing-think');
    }
    const withThink = trajectory({
      finalSql: gold,
      turns: [{ assistant: `<think>one row</think><solution>${gold}</solution>`, kind: 'answer' }],
    });
    assert.equal((await score('skyrl', { goldSql: gold, trajectory: withThink })).total, 1);
  },
);

test('skyrl format, SkyRL-SQL App. D.2: thinking models drop "the thinking-specific instructions"', async () => {
  // App. D.2 (thinking: true) runs Qwen3-style models whose reasoning is native: the prompt no longer asks for
  // <think> (a serving reasoning parser may move it out of the content), so its absence is not a format failure.
  const gold = 'SELECT 1';
  const native = trajectory({
    finalSql: gold,
    config: { thinking: true },
    turns: [{ assistant: `<solution>${gold}</solution>`, kind: 'answer' }],
  });
  assert.equal(
    (await score('skyrl', { goldSql: gold, trajectory: native })).total,
    1,
    'thinking: true does not demand the tag',
  );
});

test('skyrl on a bare SQL: no format to check, 0 or 1 by execution', async () => {
  assert.equal((await score('skyrl', { goldSql: 'SELECT 1', predSql: 'SELECT 1' })).total, 1);
  assert.equal((await score('skyrl', { goldSql: 'SELECT 1', predSql: 'SELECT 2' })).total, 0);
});

// ---- MTIR-SQL §3.3 ---------------------------------------------------------------------------------------------

const mtirEp = (
  answerTurn: string,
  finalSql: string | null,
  extra: Parameters<typeof trajectory>[0] extends infer S ? Partial<S & object> : never = {},
) =>
  trajectory({
    protocol: 'mtir',
    finalSql,
    turns: [
      {
        assistant:
          '<think>check</think>\n<tool_call>{"name": "execute_sql_query", "arguments": {"sql": "SELECT ' +
          '1"}}</tool_call>',
        exec: {},
      },
      { assistant: answerTurn, kind: 'answer', sql: finalSql },
    ],
    ...extra,
  });

test('mtir: correct = 0.1 + 0.1 + 1; wrong = 0.1 + 0.1 − 1', async () => {
  const gold = 'SELECT name FROM teacher';
  const good = await score('mtir', {
    goldSql: gold,
    trajectory: mtirEp(`<think>ok</think>\n<answer>${gold}</answer>`, gold),
  });
  assert.deepEqual(
    good.terms.map((t) => [t.name, t.value]),
    [
      ['format', 0.1],
      ['exec', 0.1],
      ['result', 1],
    ],
  );
  assert.equal(good.total, 1.2);
  const wrong = await score('mtir', {
    goldSql: gold,
    trajectory: mtirEp(
      '<think>ok</think>\n<answer>SELECT subject FROM teacher</answer>',
      'SELECT subject FROM teacher',
    ),
  });
  assert.deepEqual(
    wrong.terms.map((t) => t.value),
    [0.1, 0.1, -1],
  );
  assert.equal(wrong.total, -0.8);
});

test(
  'mtir gating: a non-executable SQL gets −0.1 and no ' + 'result reward; a bad format gets −0.1 and nothing else',
  async () => {
    const gold = 'SELECT name FROM teacher';
    const broken = await score('mtir', {
      goldSql: gold,
      trajectory: mtirEp('<think>ok</think>\n<answer>SELECT nme FROM teacher</answer>', 'SELECT nme FROM teacher'),
    });
    assert.deepEqual(
      broken.terms.map((t) => t.value),
      [0.1, -0.1, 0],
    );
    assert.match(term(broken, 'result').explanation, /gated by 'exec'/);
    const badFormat = await score('mtir', { goldSql: gold, trajectory: mtirEp(`<answer>${gold}</answer>`, gold) });
    assert.deepEqual(
      badFormat.terms.map((t) => t.value),
      [-0.1, 0, 0],
    );
    assert.match(term(badFormat, 'exec').explanation, /gated by 'format'/);
    const mixed = await score('mtir', {
      goldSql: gold,
      trajectory: mtirEp(`<think>x</think><tool_call>{}</tool_call><answer>${gold}</answer>`, gold),
    });
    assert.match(term(mixed, 'format').explanation, /mixed-call-and-answer/);
  },
);

// ---- MTSQL-R1 §3.3.2 -------------------------------------------------------------------------------------------

test('mtsqlr1 EM: §3.3.2 "a strict string-level signal … (including order, formatting, etc)", by default', async () => {
  const gold = 'SELECT name FROM student WHERE age > 20';
  const exact = await score('mtsqlr1', { goldSql: gold, predSql: gold });
  assert.equal(term(exact, 'em').value, 1);
  assert.match(term(exact, 'em').explanation, /character for character/);
  const padded = await score('mtsqlr1', { goldSql: gold, predSql: `  ${gold}\n` });
  assert.equal(term(padded, 'em').value, 0, 'surrounding whitespace is formatting: strict EM fails it');
  const lower = await score('mtsqlr1', { goldSql: gold, predSql: gold.toLowerCase() });
  assert.equal(term(lower, 'em').value, 0);
  assert.equal(term(lower, 'ex').value, 1, 'EX still matches');
  assert.match(term(lower, 'em').explanation, /character 1/);
  // A panel may relax it, and the explanation then says how.
  const trimmed = resolvePanel({ name: 'em-trim', extends: 'mtsqlr1', params: { em: { normalize: 'trim' } } });
  const relaxed = await scorePanel(trimmed, { dbPath: schoolDb, goldSql: gold, predSql: `  ${gold}\n` }, res);
  assert.equal(term(relaxed, 'em').value, 1);
  assert.match(term(relaxed, 'em').explanation, /apart from surrounding whitespace/);
});

test('mtsqlr1 clause F1: per-clause F1 averaged over the clauses either query has', async () => {
  const gold = 'SELECT name FROM student WHERE age > 20 ORDER BY name';
  const r = await score('mtsqlr1', { goldSql: gold, predSql: 'SELECT name, age FROM student WHERE age > 20' });
  // SELECT: {name} vs {name, age} → 2/3; WHERE 1; ORDER: gold only → 0; JOIN/GROUP absent from both.
  assert.ok(Math.abs(term(r, 'clause').value - (2 / 3 + 1 + 0) / 3) < 1e-12);
  assert.match(term(r, 'clause').explanation, /SELECT 0\.667, WHERE 1, ORDER 0/);
  const unparsable = await score('mtsqlr1', { goldSql: gold, predSql: 'SELEC name FROM' });
  assert.equal(term(unparsable, 'clause').value, 0);
});

test(
  'mtsqlr1 E-VERIFY table: ok/pass 1, ok/fail 0, ' + 'null/fail 0.1, null/pass 0, error/fail 1, error/pass 0',
  async () => {
    const gold = 'SELECT name FROM student';
    const cases: Array<[{ ok: boolean; rowCount: number }, 'pass' | 'no_pass', number]> = [
      [{ ok: true, rowCount: 3 }, 'pass', 1],
      [{ ok: true, rowCount: 3 }, 'no_pass', 0],
      [{ ok: true, rowCount: 0 }, 'no_pass', 0.1],
      [{ ok: true, rowCount: 0 }, 'pass', 0],
      [{ ok: false, rowCount: 0 }, 'no_pass', 1],
      [{ ok: false, rowCount: 0 }, 'pass', 0],
    ];
    for (const [exec, vr, expected] of cases) {
      const t = trajectory({
        protocol: 'mtsqlr1',
        finalSql: gold,
        turns: [
          {
            assistant: 'propose + exec_sql',
            sql: gold,
            mdp: ['PROPOSE', 'EXECUTE'],
            exec: { ...exec, errorClass: exec.ok ? null : 'sql', error: exec.ok ? null : 'boom' },
          },
          {
            assistant: `<exec_verify>${vr}</exec_verify>`,
            kind: 'answer',
            sql: gold,
            mdp: ['E-VERIFY'],
            verify: { exec: vr },
          },
        ],
      });
      const r = await score('mtsqlr1', { goldSql: gold, trajectory: t });
      assert.equal(term(r, 'verify').value, expected, `${JSON.stringify(exec)} ${vr}`);
    }
  },
);

test('mtsqlr1 M-VERIFY: F1 when the verdict is pass, 1 − F1 otherwise; w1..w4 configurable', async () => {
  const gold = 'SELECT name FROM student WHERE age > 20';
  const cand = 'SELECT name FROM student WHERE age > 19';
  const mk = (vr: string) =>
    trajectory({
      protocol: 'mtsqlr1',
      finalSql: cand,
      turns: [
        { assistant: 'memory_retrieve', kind: 'memory', sql: cand, mdp: ['PROPOSE'] },
        {
          assistant: `<memory_verify>${vr}</memory_verify>`,
          kind: 'answer',
          sql: cand,
          mdp: ['M-VERIFY'],
          verify: { memory: vr },
        },
      ],
    });
  // SELECT 1, WHERE 0 → F1 0.5
  const pass = await score('mtsqlr1', { goldSql: gold, trajectory: mk('pass') });
  assert.equal(term(pass, 'verify').value, 0.5);
  assert.equal(term(pass, 'clause').value, 0.5);
  const fail = await score('mtsqlr1', { goldSql: gold, trajectory: mk('no_pass') });
  assert.equal(term(fail, 'verify').value, 0.5);
  const exact = 'SELECT name FROM student WHERE age > 20';
  const t = trajectory({
    protocol: 'mtsqlr1',
    finalSql: exact,
    turns: [
      { assistant: 'm', kind: 'memory', sql: exact, mdp: ['PROPOSE'] },
      { assistant: 'v', kind: 'answer', sql: exact, mdp: ['M-VERIFY'], verify: { memory: 'no_pass' } },
    ],
  });
  assert.equal(
    term(await score('mtsqlr1', { goldSql: gold, trajectory: t }), 'verify').value,
    0,
    'rejecting a perfect SQL earns 1 − 1',
  );
  const weighted = resolvePanel({ name: 'w', extends: 'mtsqlr1', weights: { ex: 2, em: 0.5, clause: 3, verify: 4 } });
  const r = await scorePanel(weighted, { goldSql: gold, dbPath: schoolDb, trajectory: mk('pass') }, res);
  // age > 19 also returns Ada: EX 0, EM 0.
  assert.equal(r.total, 2 * 0 + 0.5 * 0 + 3 * 0.5 + 4 * 0.5);
});

test('syntax runs the SQL as written; exec compares as the mode rewrites it (spider drops DISTINCT)', async () => {
  const r = await score('sqltrail', {
    goldSql: 'SELECT age FROM student',
    predSql: 'SELECT DISTINCT age FROM student',
    difficulty: 'simple',
  });
  assert.match(term(r, 'syntax').explanation, /executes \(3 rows\)/);
  assert.equal(term(r, 'exec').value, 1, 'spider mode removes DISTINCT from both queries');
  const bird = await score('sqltrail', {
    goldSql: 'SELECT age FROM student',
    predSql: 'SELECT DISTINCT age FROM student',
    difficulty: 'simple',
    mode: 'bird',
  });
  assert.equal(term(bird, 'exec').value, 1, 'bird compares sets');
  const omni = await score('sqltrail', {
    goldSql: 'SELECT age, name FROM student',
    predSql: 'SELECT name, age FROM student',
    difficulty: 'simple',
    mode: 'bird',
  });
  assert.equal(term(omni, 'exec').value, 0, 'bird: column order matters');
});
