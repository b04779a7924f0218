// One evaluation run: items from the gold/prediction files, execution and exact-match verdicts, totals, warnings.
import { join } from 'node:path';
import type { EvalMode } from './modes';
import { type BatchExecutor, type EvalItem, type ExecReason, type GroupExecutor, evaluateExecution } from './execution';
import type { GoldLine } from './inputFiles';
import { type Hardness, type ScoreTable, scoreByHardness } from './scores';
import type { SpiderScorer } from './spiderHooks';
import { vesRewards } from './vesTiming';
import { rVes } from './birdVes';

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

export type EvalType = 'exec' | 'match' | 'all';

interface ReportItem {
  index: number;
  db_id: string;
  hardness: Hardness | null;
  exec?: boolean;
  match?: boolean;
  reason: ExecReason | 'exact-match' | 'no-exact-match';
  detail?: string;
  /** bird-f1: the item's Soft-F1 in [0, 1]; bird-ves: its R-VES reward tier (0, 0.25 … 1.25). */
  score?: number;
}

export interface EvalReport {
  items: ReportItem[];
  totals: {
    mode: string;
    etype: EvalType;
    count: number;
    exec?: number;
    match?: number;
    byHardness: ScoreTable;
    /** bird-f1: the mean Soft-F1 × 100, as evaluation_f1.py prints it. */
    softF1?: number;
    /** bird-ves: R-VES, the mean of 100·√reward (evaluation_ves.py compute_ves). */
    rVes?: number;
    reasons: Record<string, number>;
    goldCount: number;
    predCount: number;
    warnings: string[];
  };
}

interface RunEvalOptions {
  mode: EvalMode;
  etype: EvalType;
  dbDir: string;
  timeoutMs: number;
  run: BatchExecutor;
  /** Runs and judges groups in the SQL workers (SqlPool.execGroups); without it `run` is used and judged here. */
  runGroups?: GroupExecutor;
  scorer: SpiderScorer;
  keepDistinct?: boolean;
  /** spider2: the official `ignore_order` for every item. */
  ignoreOrder?: boolean;
  onProgress?: (done: number, total: number) => void;
  /** bird-ves: timed rounds per correct item (official 100) and items timed at once. */
  vesIterations?: number;
  vesConcurrency?: number;
}

function listIndexes(ix: number[]): string {
  const shown = ix.slice(0, 20).join(', ');
  return ix.length > 20 ? `${shown}, … (${ix.length} in all)` : shown;
}

export async function runEval(gold: GoldLine[], preds: string[], opts: RunEvalOptions): Promise<EvalReport> {
  const warnings: string[] = [];
  if (preds.length !== gold.length) {
    const common = Math.min(preds.length, gold.length);
    warnings.push(
      preds.length < gold.length
        ? `LENGTH MISMATCH: ${preds.length} predictions for ${gold.length} gold queries; ` +
            `items ${common}..${gold.length - 1} have no prediction and are scored wrong (missing-prediction)`
        : `LENGTH MISMATCH: ${preds.length} predictions for ${gold.length} gold queries; the ` +
            `last ${preds.length - common} predictions are ignored`,
    );
  }
  const items: EvalItem[] = gold.map((g, index) => ({ index, dbId: g.dbId, gold: g.sql, pred: preds[index] }));
  const doExec = opts.etype !== 'match';
  const doMatch = opts.etype !== 'exec';
  const dbPathOf = (dbId: string) => join(opts.dbDir, dbId, `${dbId}.sqlite`);

  // Hardness and exact match come from the Spider parser, not the pool: they are worked out while each chunk's
  // queries run (a gold query shared by several items is parsed once).
  const hardnessOf = new Map<string, Hardness | null>();
  const scored: { hardness: Hardness | null; match?: boolean }[] = new Array(items.length);
  const score = (start: number, end: number): void => {
    for (let i = start; i < end; i++) {
      if (scored[i]) continue;
      const it = items[i];
      const key = it.dbId + '\0' + it.gold;
      let hardness = hardnessOf.get(key);
      if (hardness === undefined) {
        hardness = opts.scorer.hardness(it.gold, it.dbId, dbPathOf(it.dbId)) ?? null;
        hardnessOf.set(key, hardness);
      }
      scored[i] = { hardness };
      if (doMatch) {
        const pred = it.pred?.trim().split('\t')[0] ?? '';
        scored[i].match = pred !== '' && (opts.scorer.exactMatch?.(it.gold, pred, it.dbId, dbPathOf(it.dbId)) ?? false);
      }
    }
  };

  const verdicts = doExec
    ? await evaluateExecution(items, {
        mode: opts.mode,
        dbDir: opts.dbDir,
        timeoutMs: opts.timeoutMs,
        run: opts.run,
        runGroups: opts.runGroups,
        keepDistinct: opts.keepDistinct,
        ignoreOrder: opts.ignoreOrder,
        onProgress: opts.onProgress,
        whileWaiting: score,
      })
    : undefined;
  score(0, items.length);
  const ves =
    verdicts && opts.mode.timesCorrectItems
      ? await vesRewards(items, verdicts, {
          mode: opts.mode,
          dbDir: opts.dbDir,
          timeoutMs: opts.timeoutMs,
          run: opts.run,
          iterations: opts.vesIterations ?? 100,
          concurrency: opts.vesConcurrency ?? 1,
        })
      : undefined;

  const report: ReportItem[] = items.map((it, i) => {
    const { hardness, match } = scored[i];
    const r: ReportItem = { index: it.index, db_id: it.dbId, hardness, reason: 'match' };
    if (verdicts) {
      r.exec = verdicts[i].exec;
      r.reason = verdicts[i].reason;
      if (verdicts[i].detail) r.detail = verdicts[i].detail;
      if (verdicts[i].score !== undefined) r.score = verdicts[i].score;
      if (ves) r.score = ves[i];
    }
    if (doMatch) {
      r.match = match;
      if (!verdicts)
        r.reason = it.pred === undefined ? 'missing-prediction' : r.match ? 'exact-match' : 'no-exact-match';
    }
    return r;
  });

  if (verdicts) {
    const emptyGold = verdicts.filter((v) => v.goldEmpty).map((v) => v.index);
    if (emptyGold.length) {
      warnings.push(
        `${emptyGold.length} items have an EMPTY gold result ([] == [] rewards any prediction that ` +
          `returns no rows): ${listIndexes(emptyGold)}`,
      );
    }
    for (const [reason, what] of [
      ['gold-error', 'gold queries FAILED (scored wrong)'],
      ['gold-timeout', 'gold queries TIMED OUT (scored wrong; raise --timeout-ms)'],
    ] as const) {
      const ix = verdicts.filter((v) => v.reason === reason).map((v) => v.index);
      if (ix.length) warnings.push(`${ix.length} ${what}: ${listIndexes(ix)}`);
    }
  }

  const unparsed = report.filter((r) => r.hardness === null).map((r) => r.index);
  if (unparsed.length) {
    warnings.push(
      `${unparsed.length} gold queries have no Spider hardness (the Spider parser rejects them); they ` +
        `count only under "all": ${listIndexes(unparsed)}`,
    );
  }
  const reasons: Record<string, number> = {};
  for (const r of report) reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
  const byHardness = scoreByHardness(
    report.map((r) => ({ hardness: r.hardness ?? undefined, exec: r.exec, match: r.match })),
    { exec: doExec, match: doMatch },
  );
  return {
    items: report,
    totals: {
      mode: opts.mode.name,
      etype: opts.etype,
      count: report.length,
      ...(doExec ? { exec: byHardness.all.exec } : {}),
      ...(doMatch ? { match: byHardness.all.match } : {}),
      byHardness,
      ...(opts.mode.score && verdicts
        ? { softF1: (100 * sum(report.map((r) => r.score ?? 0))) / (report.length || 1) }
        : {}),
      ...(ves ? { rVes: rVes(ves) } : {}),
      reasons,
      goldCount: gold.length,
      predCount: preds.length,
      warnings,
    },
  };
}
