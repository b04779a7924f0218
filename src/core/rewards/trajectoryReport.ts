// Everything the diagnostics view shows for one trajectory, as plain data: the panel's terms with their explanations,
// the execution verdict, the ODT of the final SQL against the gold, clause F1 per clause with the clause items, and
// MTSQL-R1's verification verdicts turn by turn. Scoring goes through the reward engine; nothing is recomputed here.
import type { TrajectoryRecord } from '../trajectories/types';
import { scorePanelDetailed, buildContext } from './engine';
import { clauseF1, F1_CLAUSES, type F1Clause } from './clauseF1';
import { clausesOf, dbSchema } from './analysis';
import { verifySteps } from './terms/mtsqlr1';
import { odtView, type OdtView } from './odtView';
import { recordHardness } from './report';
import type { EvalModeName } from '../eval/modes';
import type { Hardness } from '../sql/hardness';
import type { ResolvedPanel, ScoringResources, Term, TermContext } from './types';

interface ClauseRow {
  clause: F1Clause;
  /** F1 of the two item multisets; null when the clause is absent from both queries (left out of the average). */
  f1: number | null;
  pred: string[];
  gold: string[];
}

interface ClauseView {
  value: number;
  rows: ClauseRow[];
  parseError: string | null;
  goldParseError: string | null;
}

interface VerificationRow {
  turn: number;
  kind: 'E-VERIFY' | 'M-VERIFY';
  /** What the model said (E-VERIFY pass/no_pass; M-VERIFY the verdict text). */
  said: string;
  verdict: 'pass' | 'fail';
  /** The process reward this verdict earned (MTSQL-R1 §3.3.2). */
  value: number;
  why: string;
}

interface TermView extends Term {
  passed: boolean | null;
  failure: string | null;
}

export interface TrajectoryDiagnostics {
  id: string;
  groupId: string;
  sample: number;
  question: string;
  db: string;
  protocol: string;
  model: string;
  end: string;
  turns: number;
  hardness: Hardness | null;
  goldSql: string | null;
  finalSql: string | null;
  panel: string;
  total: number;
  terms: TermView[];
  /** Execution verdict of the final SQL (null without a gold). */
  exec: { correct: boolean; reason: string; detail: string | null } | null;
  /** Null when there is no final SQL or no gold. */
  odt: OdtView | null;
  clauses: ClauseView | null;
  /** Null when the trajectory has no verification verdicts. */
  verification: VerificationRow[] | null;
  /** Why parts are missing, in words ("no gold SQL in task.gold: nothing to score against"). */
  notes: string[];
}

interface TrajectoryDiagnosticsOptions {
  dbPath?: string;
  mode?: EvalModeName;
}

function clauseView(resources: ScoringResources, dbPath: string, pred: string, gold: string): ClauseView {
  const f = clauseF1(resources, dbPath, pred, gold);
  const p = clausesOf(resources, dbPath, pred);
  const g = clausesOf(resources, dbPath, gold);
  return {
    value: f.value,
    rows: F1_CLAUSES.map((clause) => ({
      clause,
      f1: f.perClause[clause] ?? null,
      pred: p.ok ? p.sets[clause] : [],
      gold: g.ok ? g.sets[clause] : [],
    })),
    parseError: f.parseError ?? null,
    goldParseError: f.goldParseError ?? null,
  };
}

function verificationRows(record: TrajectoryRecord, ctx: TermContext): VerificationRow[] | null {
  if (!record.turns.some((t) => t.action.verify?.exec !== undefined || t.action.verify?.memory !== undefined))
    return null;
  return verifySteps(ctx, record).map((s) => {
    const v = record.turns[s.turn]?.action.verify;
    return {
      turn: s.turn,
      kind: s.kind,
      said: (s.kind === 'E-VERIFY' ? v?.exec : v?.memory) ?? '',
      verdict: s.verdict,
      value: s.value,
      why: s.why,
    };
  });
}

export async function trajectoryDiagnostics(
  record: TrajectoryRecord,
  panel: ResolvedPanel,
  resources: ScoringResources,
  opts: TrajectoryDiagnosticsOptions = {},
): Promise<TrajectoryDiagnostics> {
  const dbPath = opts.dbPath ?? record.task.db.path;
  const gold = record.task.gold && record.task.gold.trim() !== '' ? record.task.gold : null;
  const base = {
    id: record.id,
    groupId: record.groupId,
    sample: record.sample,
    question: record.task.question,
    db: dbPath,
    protocol: record.protocol.name,
    model: record.model.spec,
    end: record.end,
    turns: record.turns.length,
    goldSql: gold,
    finalSql: record.finalSql,
    panel: panel.name,
  };
  if (gold === null) {
    return {
      ...base,
      hardness: record.task.difficulty,
      total: 0,
      terms: [],
      exec: null,
      odt: null,
      clauses: null,
      verification: null,
      notes: ['no gold SQL in task.gold: nothing to score against'],
    };
  }
  const input = { goldSql: gold, dbPath, trajectory: record, mode: opts.mode };
  const result = await scorePanelDetailed(panel, input, resources);
  const ctxBase = buildContext(input, resources);
  const verdict = await ctxBase.verdict(record.finalSql);
  // verifySteps reads the context's resources and input only; the descriptors keep buildContext's lazy getters lazy.
  const ctx = Object.defineProperties(
    { earlier: new Map(), params: {} },
    Object.getOwnPropertyDescriptors(ctxBase),
  ) as unknown as TermContext;
  const notes: string[] = [];
  const pred = record.finalSql;
  if (pred === null || pred.trim() === '')
    notes.push(`no final SQL (episode ended with ${record.end}): no ODT or clause comparison`);
  const hasPred = pred !== null && pred.trim() !== '';
  return {
    ...base,
    hardness: recordHardness(record, dbPath, resources),
    total: result.total,
    terms: result.terms.map((t, i) => ({
      ...t,
      passed: result.details[i].passed ?? null,
      failure: result.details[i].failure ?? null,
    })),
    exec: { correct: verdict.correct, reason: verdict.reason, detail: verdict.detail ?? null },
    odt: hasPred ? odtView(pred, gold, dbSchema(resources, dbPath)) : null,
    clauses: hasPred ? clauseView(resources, dbPath, pred, gold) : null,
    verification: verificationRows(record, ctx),
    notes,
  };
}
