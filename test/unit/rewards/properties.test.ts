// Property tests over generated query pairs (seeded, so a failure reproduces): ranges of every term and panel,
// symmetry of the symmetric similarities, identity scoring full marks.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { bigramSimilarity } from '../../../src/core/sql';
import { clauseF1, loadPanel, scorePanel } from '../../../src/core/rewards';
import { schemaItemsOf } from '../../../src/core/rewards/analysis';
import { jaccard } from '../../../src/core/sql';
import { schoolDb, newPool, newResources, skyrlEpisode } from './fixtures';
import { lcg32, rngOf } from '../../../src/core/util/random';

const pool = newPool();
after(() => pool.close());
const res = newResources(pool);

function generator(seed: number) {
  const r = lcg32(seed);
  const { pick } = rngOf(r);
  const tables: Record<string, string[]> = {
    student: ['id', 'name', 'age', 'class_id'],
    teacher: ['id', 'name', 'subject'],
    class: ['id', 'title', 'teacher_id'],
  };
  return (): string => {
    const kind = r();
    if (kind < 0.15) {
      return (
        `SELECT T1.name, T2.title FROM student AS T1 JOIN class AS T2 ON T1.class_id = ` +
        `T2.id${r() < 0.5 ? ` WHERE T1.age > ${Math.floor(r() * 25)}` : ''}`
      );
    }
    const t = pick(Object.keys(tables));
    const cols = tables[t];
    const sel = r() < 0.2 ? 'count(*)' : [...new Set([pick(cols), ...(r() < 0.4 ? [pick(cols)] : [])])].join(', ');
    let sql = `SELECT ${sel} FROM ${t}`;
    if (r() < 0.5) sql += ` WHERE ${pick(cols)} ${pick(['=', '>', '<', '!='])} ${Math.floor(r() * 4)}`;
    if (sel !== 'count(*)' && r() < 0.3) sql += ` ORDER BY ${pick(cols)}${r() < 0.5 ? ' DESC' : ''}`;
    if (r() < 0.1) sql = sql.replace('SELECT', 'SELEC');
    return sql;
  };
}

const pairs = (seed: number, n: number) => {
  const g = generator(seed);
  return Array.from({ length: n }, () => [g(), g()] as const);
};

test('bigram, schema and clause-F1 similarities lie in [0, 1], are symmetric, and are 1 on identical queries', () => {
  for (const [a, b] of pairs(7, 300)) {
    const bg = bigramSimilarity(a, b);
    assert.ok(bg >= 0 && bg <= 1, `${a} | ${b}`);
    assert.equal(bg, bigramSimilarity(b, a));
    const sa = schemaItemsOf(res, schoolDb, a).items,
      sb = schemaItemsOf(res, schoolDb, b).items;
    const sj = jaccard(sa, sb);
    assert.ok(sj >= 0 && sj <= 1);
    assert.equal(sj, jaccard(sb, sa));
    const f = clauseF1(res, schoolDb, a, b).value;
    assert.ok(f >= 0 && f <= 1);
    const parses = (s: string) => !s.startsWith('SELEC ');
    if (parses(a) && parses(b)) assert.ok(Math.abs(f - clauseF1(res, schoolDb, b, a).value) < 1e-12, `${a} | ${b}`);
    assert.equal(bigramSimilarity(a, a), 1);
    if (parses(a)) assert.equal(clauseF1(res, schoolDb, a, a).value, 1);
  }
});

test('panel totals stay in their ranges; every contribution is weight·value', async () => {
  const sqltrail = loadPanel('sqltrail'),
    skyrl = loadPanel('skyrl'),
    mtir = loadPanel('mtir'),
    mtsqlr1 = loadPanel('mtsqlr1');
  const mtirTotals = new Set([-0.1, 0, -0.8, 1.2]);
  for (const [gold, pred] of pairs(11, 120)) {
    const goldOk = !gold.startsWith('SELEC ');
    if (!goldOk) continue;
    const input = { goldSql: gold, dbPath: schoolDb, predSql: pred, difficulty: 'medium' as const };
    const t = await scorePanel(sqltrail, input, res);
    assert.ok(t.total >= 0 && t.total <= 11, `${t.total}`);
    for (const term of t.terms) {
      assert.ok(term.value >= 0 && term.value <= 1, `${term.name} ${term.value}`);
      assert.equal(term.contribution, term.weight * term.value);
      assert.ok(term.explanation.length > 0 && !term.explanation.includes('\n'));
    }
    assert.ok([0, 1].includes((await scorePanel(skyrl, input, res)).total));
    const ep = skyrlEpisode([], pred);
    assert.ok([-1, 0, 1].includes((await scorePanel(skyrl, { ...input, trajectory: ep }, res)).total));
    const m = await scorePanel(mtir, input, res);
    assert.ok(mtirTotals.has(m.total), `mtir total ${m.total}`);
    const r1 = await scorePanel(mtsqlr1, input, res);
    assert.ok(r1.total >= 0 && r1.total <= 4);
    if (pred === gold) assert.equal(t.total, 11);
  }
});
