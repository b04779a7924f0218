// `quarry eval --compare-mode`: the items two modes scored differently, each with the categories that explain it
// (disagreement.ts), from the raw gold and predicted results on the item's first database.
import type { BatchExecutor } from './execution';
import type { GoldLine } from './inputFiles';
import { evalMode } from './modes';
import { toResultTable } from './pyValues';
import type { EvalReport } from './runEval';
import { type DisagreementCategory, classifyDisagreement } from './disagreement';

export interface Disagreement {
  index: number;
  db_id: string;
  /** Mode name → its verdict and reason (and its score: bird-f1's Soft-F1, bird-ves's reward tier). */
  verdicts: Record<string, { exec: boolean; reason: string; score?: number }>;
  categories: DisagreementCategory[];
}

export async function explainDisagreements(
  gold: GoldLine[],
  preds: string[],
  a: EvalReport,
  b: EvalReport,
  opts: { dbDir: string; timeoutMs: number; run: BatchExecutor },
): Promise<Disagreement[]> {
  const differ = a.items.filter((it, i) => (it.exec ?? false) !== (b.items[i].exec ?? false));
  const mode = evalMode(a.totals.mode);
  const pending = differ.map((it) => {
    const db = mode.databases(opts.dbDir, it.db_id)[0];
    const pred = preds[it.index]?.trim().split('\t')[0] ?? '';
    return { it, db, gold: gold[it.index].sql, pred };
  });
  const runnable = pending.filter((p) => p.db !== undefined && p.pred !== '');
  const req = (db: string, sql: string) => ({
    db,
    sql,
    timeoutMs: opts.timeoutMs,
    maxRows: Infinity,
    maxCellChars: Infinity,
  });
  const results = await opts.run(runnable.flatMap((p) => [req(p.db!, p.gold), req(p.db!, p.pred)]));
  const byIndex = new Map(runnable.map((p, k) => [p.it.index, [results[2 * k], results[2 * k + 1]] as const]));
  return pending.map(({ it, gold: g, pred }) => {
    const [gr, pr] = byIndex.get(it.index) ?? [undefined, undefined];
    const va = { mode: a.totals.mode, exec: it.exec ?? false, reason: it.reason };
    const bi = b.items[it.index];
    const vb = { mode: b.totals.mode, exec: bi.exec ?? false, reason: bi.reason };
    return {
      index: it.index,
      db_id: it.db_id,
      verdicts: {
        [va.mode]: { exec: va.exec, reason: va.reason, ...(it.score !== undefined ? { score: it.score } : {}) },
        [vb.mode]: { exec: vb.exec, reason: vb.reason, ...(bi.score !== undefined ? { score: bi.score } : {}) },
      },
      categories: classifyDisagreement({
        gold: g,
        pred,
        goldResult: gr?.ok ? toResultTable(gr) : null,
        predResult: pr?.ok ? toResultTable(pr) : null,
        a: va,
        b: vb,
      }),
    };
  });
}

/** One line: how many items the modes scored differently, and how many fell in each category. */
export function formatDisagreementCounts(ds: Disagreement[], a: string, b: string): string {
  const n: Record<string, number> = {};
  for (const d of ds) for (const c of d.categories) n[c] = (n[c] ?? 0) + 1;
  const parts = Object.entries(n)
    .sort((x, y) => y[1] - x[1])
    .map(([c, k]) => `${c} ${k}`);
  return `${a} vs ${b}: ${ds.length} items scored differently${parts.length ? ` (${parts.join(', ')})` : ''}`;
}
