// Progress-SQL's four reward components (§4.2, eqs. 1–4; weights of App. B, Table 4). R(Y) = R_fmt + R_exec +
// R_late + R_align. Each term's value is computed over the SQL trajectory (turns.ts); ω_fmt and ω_acc are the panel
// weights of `fmt` and `late`, the piecewise ω of `exec` and `align` are parameters (their weight is 1).
import { brief } from '../analysis';
import { checkProgressFormat } from './format';
import { alignReward, alignmentOf, ALIGN_DEFAULTS } from './alignment';
import { executable, firstSuccess, sqlTrajectory } from './turns';
import type { TermContext, TermDefinition } from '../types';

const num = (ctx: TermContext, key: string, fallback: number): number => {
  const v = ctx.params[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
};

const progressFormat: TermDefinition = {
  id: 'progress.format',
  description: 'the final output follows <think>…</think> <sql>…</sql> (value 1, else 0; ω_fmt is the weight)',
  source: 'Progress-SQL §4.2 (R_fmt), App. F output format',
  fn(ctx) {
    const turns = ctx.trajectory?.turns ?? [];
    if (!ctx.trajectory) {
      return { value: 1, explanation: 'bare SQL, no model output to check: counted as well-formed', passed: true };
    }
    if (turns.length === 0)
      return { value: 0, explanation: 'the trajectory has no assistant turns', passed: false, failure: 'no-turns' };
    const f = checkProgressFormat(turns[turns.length - 1].assistant ?? '');
    return {
      value: f.ok ? 1 : 0,
      explanation: f.ok ? f.explanation : `format invalid: ${f.explanation}`,
      passed: f.ok,
      failure: f.ok ? undefined : 'format',
    };
  },
};

const progressExec: TermDefinition = {
  id: 'progress.exec',
  description: 'executability of the first vs. the final SQL: keep 0.5, recover 0.25, deteriorate −0.25, else 0',
  source: 'Progress-SQL §4.2, eq. 3; App. B Table 4',
  defaultParams: { keep: 0.5, recover: 0.25, deteriorate: -0.25 },
  async fn(ctx) {
    const ys = sqlTrajectory(ctx);
    const first = await executable(ctx, ys[0]);
    const final = await executable(ctx, ys[ys.length - 1]);
    const k = ys.length;
    const [value, what] =
      first && final
        ? [num(ctx, 'keep', 0.5), 'keep']
        : !first && final
          ? [num(ctx, 'recover', 0.25), 'recover']
          : first && !final
            ? [num(ctx, 'deteriorate', -0.25), 'deteriorate']
            : [0, 'neither'];
    const state = (ok: boolean) => (ok ? 'executable' : 'not executable');
    return {
      value,
      explanation: `${what}: first SQL ${state(first)}, final SQL (turn ${k}) ${state(final)}`,
      passed: final,
      data: { first, final, turns: k },
    };
  },
};

const progressLate: TermDefinition = {
  id: 'progress.late',
  description: 'γ^(k*−1) for the first turn k* whose result matches the gold (0 if none); ω_acc is the weight',
  source: 'Progress-SQL §4.2, eq. 2; App. B Table 4 (γ = 0.5)',
  defaultParams: { gamma: 0.5 },
  async fn(ctx) {
    const gamma = num(ctx, 'gamma', 0.5);
    const ys = sqlTrajectory(ctx);
    const k = await firstSuccess(ctx, ys);
    if (k === null || k > ctx.turnBudget) {
      const why =
        k === null
          ? `no turn of ${ys.length} matches the gold result`
          : `first match at turn ${k} is beyond the budget T = ${ctx.turnBudget}`;
      return { value: 0, explanation: why, passed: false, failure: 'no-match', data: { kStar: k } };
    }
    const value = gamma ** (k - 1);
    const v = await ctx.verdict(ys[k - 1]);
    return {
      value,
      explanation:
        `first match at turn k* = ${k}: γ^(k*−1) = ${gamma}^${k - 1} ` +
        `= ${round(value)}${v.goldEmpty ? ' — but the gold result is empty' : ''}`,
      passed: true,
      data: { kStar: k, goldEmpty: v.goldEmpty },
    };
  },
};

const progressAlign: TermDefinition = {
  id: 'progress.align',
  description: 'Δ = F(final) − F(first), F = ½(ODT structure + bigram Jaccard); ω⁺·Δ if Δ > 0, else ω⁻',
  source: 'Progress-SQL §4.2, eq. 1; App. D (ODT); App. B Table 4',
  defaultParams: { ...ALIGN_DEFAULTS },
  fn(ctx) {
    const ys = sqlTrajectory(ctx);
    const first = alignmentOf(ctx.resources, ctx.input.dbPath, ctx.input.goldSql, ys[0]);
    const final = alignmentOf(ctx.resources, ctx.input.dbPath, ctx.input.goldSql, ys[ys.length - 1]);
    const F1 = first?.F ?? 0;
    const FK = final?.F ?? 0;
    const delta = FK - F1;
    const value = alignReward(
      delta,
      num(ctx, 'positive', ALIGN_DEFAULTS.positive),
      num(ctx, 'negative', ALIGN_DEFAULTS.negative),
    );
    const describe = (c: typeof first, y: string | null) =>
      c === null
        ? `${y === null ? 'no SQL' : 'empty SQL'} (F 0)`
        : `F ${round(c.F)} (struct ${round(c.struct)}${c.pred.ok ? '' : ', unparsed'}, lexical ${round(c.lexical)})`;
    const explanation =
      ys.length === 1
        ? `one SQL only, Δ = 0 (no progress): ${describe(first, ys[0])}`
        : `Δ = ${round(delta)}: first ${describe(first, ys[0])} → final ${describe(final, ys[ys.length - 1])}`;
    const summary = (c: typeof first) =>
      c === null
        ? null
        : { F: c.F, struct: c.struct, lexical: c.lexical, tags: c.tags, parsed: c.pred.ok && c.gold.ok };
    return {
      value,
      explanation: delta > 0 ? explanation : `${explanation}; no improvement`,
      passed: delta > 0,
      data: {
        delta,
        first: summary(first),
        final: summary(final),
        firstSql: ys[0] === null ? null : brief(ys[0], 200),
      },
    };
  },
};

function round(x: number): string {
  return String(Math.round(x * 10_000) / 10_000);
}

export const PROGRESS_TERMS: TermDefinition[] = [progressFormat, progressExec, progressLate, progressAlign];
