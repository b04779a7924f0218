// MTSQL-R1's rewards (§3.3.2): R_all = w1·R_EX + w2·R_EM + w3·R_Propose/Self-Correct + w4·(R_E-Verify + R_M-Verify).
// The paper scores every PROPOSE/SELF-CORRECT/E-VERIFY/M-VERIFY action; it does not say how several actions of one
// kind combine into the trajectory's term. Here they are averaged (param aggregate: 'mean' | 'sum'), so a trajectory
// cannot raise its reward by proposing or verifying more often.
import type { TrajectoryRecord, TrajectoryTurn, TurnExec } from '../../trajectories/types';
import { clauseF1, describeClauseF1, round } from '../clauseF1';
import { brief } from '../analysis';
import type { TermContext, TermDefinition } from '../types';

function aggregate(ctx: TermContext, values: number[]): number {
  if (values.length === 0) return 0;
  const sum = values.reduce((a, b) => a + b, 0);
  return ctx.params.aggregate === 'sum' ? sum : sum / values.length;
}

function aggWord(ctx: TermContext): string {
  return ctx.params.aggregate === 'sum' ? 'sum' : 'mean';
}

type EmNormalize = 'trim' | 'none' | 'whitespace';

/**
 * The text MTSQL-R1's R_EM compares: as written ('none'), without surrounding whitespace ('trim'), or
 * whitespace-collapsed.
 */
function emText(sql: string, normalize: EmNormalize = 'none'): string {
  return normalize === 'none' ? sql : normalize === 'whitespace' ? sql.replace(/\s+/g, ' ').trim() : sql.trim();
}

/** MTSQL-R1 §3.3.2 / §4: EM = I(ŷ == y), "strict string-level … including order, formatting". */
export function stringExactMatch(pred: string, gold: string, normalize: EmNormalize = 'none'): boolean {
  return emText(pred, normalize) === emText(gold, normalize);
}

/**
 * R_EM = I(ŷ_n == y): string equality. §3.3.2 asks a "strict string-level signal … (including order, formatting,
 * etc)", so `normalize` is 'none' by default (character for character); a panel may relax it to 'trim' (surrounding
 * whitespace ignored) or 'whitespace' (runs of whitespace collapsed), and the explanation says which.
 */
const EM_SAME: Record<EmNormalize, string> = {
  none: 'character for character',
  trim: 'apart from surrounding whitespace',
  whitespace: 'apart from how whitespace is spaced',
};

function emMode(ctx: { params: Record<string, unknown> }): EmNormalize {
  const n = ctx.params.normalize;
  return n === 'trim' || n === 'whitespace' ? n : 'none';
}

export const mtsqlr1Em: TermDefinition = {
  id: 'mtsqlr1.em',
  description: 'the final SQL string equals the gold SQL string',
  source: 'MTSQL-R1 §3.3.2 (R_EM)',
  defaultParams: { normalize: 'none' },
  fn(ctx) {
    if (ctx.predSql === null) return { value: 0, explanation: 'no final SQL', passed: false };
    const norm = (s: string) => emText(s, emMode(ctx));
    const ok = norm(ctx.predSql) === norm(ctx.input.goldSql);
    if (ok) return { value: 1, explanation: `final SQL is the gold SQL, ${EM_SAME[emMode(ctx)]}`, passed: true };
    const p = norm(ctx.predSql),
      g = norm(ctx.input.goldSql);
    let i = 0;
    while (i < p.length && i < g.length && p[i] === g[i]) i++;
    return {
      value: 0,
      explanation:
        `strings differ at character ${i + 1}: "${brief(p.slice(i), 24)}" vs gold ` + `"${brief(g.slice(i), 24)}"`,
      passed: false,
    };
  },
};

/** The candidate SQLs of PROPOSE and SELF-CORRECT actions, in order. */
function proposals(t: TrajectoryRecord): Array<{ turn: number; sql: string; label: string }> {
  const out: Array<{ turn: number; sql: string; label: string }> = [];
  for (const turn of t.turns) {
    const label = turn.action.mdp.find((m) => m === 'PROPOSE' || m === 'SELF-CORRECT');
    if (label && turn.action.sql) out.push({ turn: turn.index, sql: turn.action.sql, label });
  }
  return out;
}

export const mtsqlr1Clause: TermDefinition = {
  id: 'mtsqlr1.clause',
  description:
    'clause-match F1 (SELECT, WHERE, JOIN, GROUP, ORDER) of each PROPOSE/SELF-CORRECT candidate with the gold',
  source: 'MTSQL-R1 §3.3.2 (R_Propose/Self-Correct)',
  defaultParams: { aggregate: 'mean' },
  fn(ctx) {
    const steps = ctx.trajectory
      ? proposals(ctx.trajectory)
      : ctx.predSql
        ? [{ turn: 0, sql: ctx.predSql, label: 'PROPOSE' }]
        : [];
    if (steps.length === 0) return { value: 0, explanation: 'no PROPOSE or SELF-CORRECT step with a SQL candidate' };
    const scored = steps.map((s) => ({
      ...s,
      f1: clauseF1(ctx.resources, ctx.input.dbPath, s.sql, ctx.input.goldSql),
    }));
    const value = aggregate(
      ctx,
      scored.map((s) => s.f1.value),
    );
    const explanation =
      scored.length === 1
        ? `${scored[0].label}: ${describeClauseF1(scored[0].f1)}`
        : `${aggWord(ctx)} of ${scored.length} ` +
          `steps: ${scored.map((s) => `${s.label}@${s.turn + 1} ${round(s.f1.value)}`).join(', ')}`;
    return {
      value,
      explanation,
      data: { steps: scored.map((s) => ({ turn: s.turn, label: s.label, f1: s.f1.value, perClause: s.f1.perClause })) },
    };
  },
};

type ExecCategory = 'ok' | 'null' | 'error';

/** ok: rows came back; null: it ran and returned nothing; error: it failed (SQL error, timeout, rejected). */
function execCategory(e: TurnExec): ExecCategory {
  if (!e.ok) return 'error';
  return e.rowCount === 0 ? 'null' : 'ok';
}

/** The E-VERIFY table: rows Exec Results ok/null/error, columns VR fail/pass. */
const E_VERIFY_TABLE: Record<ExecCategory, { fail: number; pass: number }> = {
  ok: { fail: 0, pass: 1 },
  null: { fail: 0.1, pass: 0 },
  error: { fail: 1, pass: 0 },
};

function latestBefore<T>(
  turns: TrajectoryTurn[],
  k: number,
  pick: (t: TrajectoryTurn) => T | null | undefined,
): { turn: number; value: T } | null {
  for (let j = k - 1; j >= 0; j--) {
    const v = pick(turns[j]);
    if (v !== null && v !== undefined) return { turn: j, value: v };
  }
  return null;
}

interface VerifyStep {
  kind: 'E-VERIFY' | 'M-VERIFY';
  turn: number;
  verdict: 'pass' | 'fail';
  value: number;
  why: string;
}

export function verifySteps(ctx: TermContext, t: TrajectoryRecord): VerifyStep[] {
  const steps: VerifyStep[] = [];
  for (const turn of t.turns) {
    const k = turn.index;
    const ev = turn.action.verify?.exec;
    if (ev !== undefined) {
      const verdict = ev === 'pass' ? 'pass' : 'fail';
      // The SQL being verified is the one executed last before this turn (its result is what the model judged).
      const executed = latestBefore(t.turns, k, (x) => x.exec);
      if (!executed) {
        steps.push({ kind: 'E-VERIFY', turn: k, verdict, value: 0, why: 'no earlier execution to verify' });
      } else {
        const cat = execCategory(executed.value);
        steps.push({
          kind: 'E-VERIFY',
          turn: k,
          verdict,
          value: E_VERIFY_TABLE[cat][verdict],
          why: `exec ${cat} (turn ${executed.turn + 1}), VR ${verdict}`,
        });
      }
    }
    const mv = turn.action.verify?.memory;
    if (mv !== undefined) {
      const verdict = mv.trim().toLowerCase() === 'pass' ? 'pass' : 'fail';
      const candidate =
        latestBefore(t.turns, k, (x) => x.action.sql) ?? (turn.action.sql ? { turn: k, value: turn.action.sql } : null);
      if (!candidate) {
        steps.push({ kind: 'M-VERIFY', turn: k, verdict, value: 0, why: 'no candidate SQL to verify' });
      } else {
        const f1 = clauseF1(ctx.resources, ctx.input.dbPath, candidate.value, ctx.input.goldSql);
        const value = verdict === 'pass' ? f1.value : 1 - f1.value;
        steps.push({
          kind: 'M-VERIFY',
          turn: k,
          verdict,
          value,
          why: `VR ${verdict}, clause F1 ${round(f1.value)} → ${verdict === 'pass' ? 'F1' : '1 − F1'}`,
        });
      }
    }
  }
  return steps;
}

export const mtsqlr1Verify: TermDefinition = {
  id: 'mtsqlr1.verify',
  description: 'R_E-Verify + R_M-Verify: whether each verification verdict agrees with the execution result / the gold',
  source: 'MTSQL-R1 §3.3.2 (E-VERIFY table, M-VERIFY)',
  defaultParams: { aggregate: 'mean' },
  fn(ctx) {
    if (!ctx.trajectory) return { value: 0, explanation: 'bare SQL: no verification steps' };
    const steps = verifySteps(ctx, ctx.trajectory);
    if (steps.length === 0) return { value: 0, explanation: 'no E-VERIFY or M-VERIFY verdict in the trajectory' };
    const e = steps.filter((s) => s.kind === 'E-VERIFY'),
      m = steps.filter((s) => s.kind === 'M-VERIFY');
    const rE = aggregate(
        ctx,
        e.map((s) => s.value),
      ),
      rM = aggregate(
        ctx,
        m.map((s) => s.value),
      );
    const part = (name: string, xs: VerifyStep[], r: number) =>
      xs.length === 0
        ? `${name} none`
        : xs.length === 1
          ? `${name} ${round(r)} (${xs[0].why})`
          : `${name} ${aggWord(ctx)} ${round(r)} over ${xs.length}`;
    return {
      value: rE + rM,
      explanation: `${part('E-VERIFY', e, rE)}; ${part('M-VERIFY', m, rM)}`,
      data: { eVerify: rE, mVerify: rM, steps },
    };
  },
};
