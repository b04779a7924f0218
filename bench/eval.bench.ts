// quarry eval --mode spider on the Spider train gold used as predictions, and on a perturbed copy; optionally the
// official test-suite evaluator on the same files (QUARRY_OFFICIAL_SPIDER = a directory holding driver.py, which
// calls exec_eval.eval_exec_match per item the way evaluation.py does) with the speed ratio and per-item agreement.
// QUARRY_OFFICIAL_BIRD = a directory holding driver_bird.py (BIRD evaluation_ex.py's per-item scoring) adds the same
// for --mode bird.
import { readFileSync, writeFileSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { repoRoot, requireSpider, writeResult } from './common';

interface SpiderExample { query: string; db_id: string }
interface TableEntry { db_id: string; table_names_original: string[] }

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Deterministic wrong-or-maybe-wrong variants of a gold query; the kind cycles with the index. */
export function perturb(sql: string, i: number, tablesOf: (sql: string) => string[]): string {
  const kinds: ((s: string) => string | undefined)[] = [
    (s) => (/\bORDER BY\b/i.test(s)
      ? (/\bDESC\b/i.test(s) ? s.replace(/\bDESC\b/i, 'ASC') : /\bASC\b/i.test(s) ? s.replace(/\bASC\b/i, 'DESC')
        : s.replace(/(\bORDER BY\s+[^\s,)]+(?:\s*\([^)]*\))?)/i, '$1 DESC'))
      : undefined),
    (s) => (/\bDISTINCT\b/i.test(s) ? s.replace(/\bDISTINCT\s+/i, '') : s.replace(/^SELECT\s+/i, 'SELECT DISTINCT ')),
    (s) => (/(['"])[^'"]*\1/.test(s) ? s.replace(/(['"])([^'"]*)\1/, '$1$2x$1')
      : /\b\d+\b/.test(s) ? s.replace(/\b(\d+)\b/, (_, n: string) => String(Number(n) + 1)) : undefined),
    (s) => (/\bWHERE\b[^()]*?\s(AND|OR)\s/i.test(s)
      ? s.replace(/\s(AND|OR)\s.*?(?=\s(?:GROUP BY|ORDER BY|LIMIT|INTERSECT|UNION|EXCEPT)\b|\)|$)/i, '') : undefined),
    (s) => {
      const m = /^SELECT\s+(.+?)\s+FROM\b/i.exec(s);
      if (!m || m[1].includes('(') || !m[1].includes(',')) return undefined;
      const cols = m[1].split(',').map((c) => c.trim());
      return s.replace(m[1], [cols[1], cols[0], ...cols.slice(2)].join(' , '));
    },
    (s) => (/\bLIMIT\b/i.test(s) ? s.replace(/\bLIMIT\s+\d+/i, 'LIMIT 2') : s + ' LIMIT 1'),
    (s) => {
      const m = /\bFROM\s+([A-Za-z_][\w]*)/i.exec(s);
      const other = m && tablesOf(s).find((t) => t.toLowerCase() !== m[1].toLowerCase());
      return m && other ? s.replace(m[0], `FROM ${other}`) : undefined;
    },
    (s) => s,
  ];
  for (let k = 0; k < kinds.length; k++) {
    const out = kinds[(i + k) % kinds.length](sql);
    if (out !== undefined && out !== sql) return out;
  }
  return sql;
}

function timed(cmd: string, args: string[]): { seconds: number; status: number | null; stderr: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { seconds: (performance.now() - t0) / 1000, status: r.status, stderr: r.stderr ?? '' };
}

const spider = requireSpider();
const examples: SpiderExample[] = JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8'));
const tables: TableEntry[] = JSON.parse(readFileSync(join(spider, 'tables.json'), 'utf8'));
const tableNames = new Map(tables.map((t) => [t.db_id, t.table_names_original]));
const dbDir = join(spider, 'database');
const work = mkdtempSync(join(tmpdir(), 'quarry-eval-bench-'));
const gold = join(work, 'gold.sql');
writeFileSync(gold, examples.map((e) => `${oneLine(e.query)}\t${e.db_id}`).join('\n') + '\n');
const inputs = {
  gold: examples.map((e) => oneLine(e.query)),
  perturbed: examples.map((e, i) => perturb(oneLine(e.query), i, () => tableNames.get(e.db_id) ?? [])),
};
const python = process.env.QUARRY_PYTHON ?? '/usr/bin/python3';
const cli = join(repoRoot, 'dist', 'cli.js');
// Spider always; BIRD too when its reconstructed driver is given (it validates the bird mode on the same inputs).
const runs = [
  { mode: 'spider', official: process.env.QUARRY_OFFICIAL_SPIDER, driver: 'driver.py' },
  ...(process.env.QUARRY_OFFICIAL_BIRD ? [{ mode: 'bird', official: process.env.QUARRY_OFFICIAL_BIRD, driver: 'driver_bird.py' }] : []),
];
const result: Record<string, unknown> = { items: examples.length };

for (const { mode, official, driver } of runs) {
  const modeResult: Record<string, unknown> = { official: official ?? null };
  for (const [name, preds] of Object.entries(inputs)) {
    const pred = join(work, `${name}.pred.sql`);
    const out = join(work, `${mode}.${name}.report.json`);
    writeFileSync(pred, preds.join('\n') + '\n');
    const ours = timed(process.execPath, [cli, 'eval', '--mode', mode, '--gold', gold, '--pred', pred, '--db-dir', dbDir, '--out', out]);
    if (ours.status !== 0) throw new Error(`quarry eval failed on ${name}: ${ours.stderr}`);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { items: { exec: boolean; reason: string }[]; totals: { exec: number } };
    const entry: Record<string, unknown> = { oursSeconds: ours.seconds, oursExec: report.totals.exec };
    console.log(`${mode} ${name}: quarry eval ${ours.seconds.toFixed(2)} s, EX ${report.totals.exec.toFixed(4)}`);
    if (official && existsSync(join(official, driver))) {
      const offOut = join(work, `${mode}.${name}.official.json`);
      const off = timed(python, [join(official, driver), gold, pred, dbDir, offOut]);
      if (off.status !== 0) throw new Error(`official evaluator failed on ${name}: ${off.stderr}`);
      const verdicts = JSON.parse(readFileSync(offOut, 'utf8')) as (number | string)[];
      const disagreements = verdicts.flatMap((v, i) => ((v === 1) !== report.items[i].exec
        ? [{ index: i, official: v, ours: report.items[i].reason, pred: preds[i], gold: examples[i].query }] : []));
      const officialEx = verdicts.filter((v) => v === 1).length / verdicts.length;
      Object.assign(entry, {
        officialSeconds: off.seconds, officialExec: officialEx, speedup: off.seconds / ours.seconds,
        agreement: 1 - disagreements.length / verdicts.length, disagreements,
      });
      console.log(`${mode} ${name}: official ${off.seconds.toFixed(2)} s (EX ${officialEx.toFixed(4)}), speed-up ${(off.seconds / ours.seconds).toFixed(1)}x, `
        + `agreement ${verdicts.length - disagreements.length}/${verdicts.length}`);
    }
    modeResult[name] = entry;
  }
  result[mode] = modeResult;
}
rmSync(work, { recursive: true, force: true });
writeResult('eval', result);
