// Scores one input with one resolved panel: builds the term context, runs the terms in panel order (gated terms
// skipped when a gate failed), sums weight·value.
import { evalMode } from '../eval/modes';
import { difficultyFromHardness } from './difficulty';
import { computeVerdict } from './verdict';
import { dbIdOfPath, suiteForItem, type SuiteDatabases } from './testSuite';
import { spiderHardness } from '../sql/hardness';
import { loadSpiderSchema } from '../sql/spider/schema';
import type { TrajectoryRecord } from '../trajectories/types';
import type {
  DetailedPanelResult,
  ExecOutcome,
  PanelResult,
  ResolvedPanel,
  ScoringInput,
  ScoringResources,
  SuiteCheck,
  Term,
  TermContext,
  TermOutput,
} from './types';

/** SQL-Trail trains with a budget of ten turns (App. A.5); used when neither input nor trajectory gives T. */
const DEFAULT_TURN_BUDGET = 10;

function resolveTurnBudget(input: ScoringInput): number {
  if (input.turnBudget !== undefined) return input.turnBudget;
  const p = input.trajectory?.protocol;
  for (const b of [p?.budget, p?.config?.maxTurns]) if (typeof b === 'number' && b > 0) return b;
  return DEFAULT_TURN_BUDGET;
}

/** Given → the trajectory's task → Spider hardness of the gold (official rules, schema read from the database). */
function resolveDifficulty(
  input: ScoringInput,
  trajectory: TrajectoryRecord | null,
  resources: ScoringResources,
): Pick<TermContext, 'difficulty' | 'difficultySource'> {
  if (input.difficulty) return { difficulty: input.difficulty, difficultySource: 'input' };
  if (trajectory?.task?.difficulty)
    return { difficulty: difficultyFromHardness(trajectory.task.difficulty), difficultySource: 'trajectory' };
  const h = resources.memo('goldHardness', input.dbPath + '\0' + input.goldSql, () => {
    try {
      return spiderHardness(input.goldSql, loadSpiderSchema(input.dbPath)).hardness;
    } catch {
      return null;
    }
  });
  return h
    ? { difficulty: difficultyFromHardness(h), difficultySource: 'gold-hardness' }
    : { difficulty: null, difficultySource: 'unknown' };
}

/**
 * The test-suite databases a panel's execution terms check this input on (undefined: its own database only); throws
 * SuiteError when the panel requires a suite it cannot have.
 */
export function inputSuite(panel: ResolvedPanel, input: ScoringInput): SuiteDatabases | undefined {
  return suiteForItem(panel.testSuite ?? 'auto', panel.name, input.testSuite, input.dbId ?? dbIdOfPath(input.dbPath));
}

/**
 * The context terms see; `verdict` is memoised per SQL for this scoring and checks over `suite` when given (see
 * inputSuite).
 */
export function buildContext(
  input: ScoringInput,
  resources: ScoringResources,
  suite?: SuiteDatabases,
): Omit<TermContext, 'earlier' | 'params'> {
  const trajectory = input.trajectory ?? null;
  const predSql = trajectory ? trajectory.finalSql : (input.predSql ?? null);
  const mode = evalMode(input.mode ?? 'spider');
  const verdicts = new Map<string, Promise<ExecOutcome>>();
  // Difficulty is resolved on first read: only turn terms need it, and the fallback parses the gold with Spider's
  // parser.
  let resolved: Pick<TermContext, 'difficulty' | 'difficultySource'> | undefined;
  const difficulty = () => (resolved ??= resolveDifficulty(input, trajectory, resources));
  return {
    input,
    predSql,
    trajectory,
    get difficulty() {
      return difficulty().difficulty;
    },
    get difficultySource() {
      return difficulty().difficultySource;
    },
    turnBudget: resolveTurnBudget(input),
    mode,
    resources,
    verdict(sql) {
      const key = sql === null ? '\0null' : sql;
      let v = verdicts.get(key);
      if (!v) {
        v = computeVerdict(sql, input.goldSql, input.dbPath, mode, resources, suite);
        verdicts.set(key, v);
      }
      return v;
    },
  };
}

/** How a scored panel's execution terms went over a test suite (the first term that checked over one), or undefined. */
export function suiteCheckOf(result: DetailedPanelResult): SuiteCheck | undefined {
  for (const d of result.details) {
    const s = d.data?.suite as SuiteCheck | undefined;
    if (s) return s;
  }
  return undefined;
}

function checkOutput(out: TermOutput, id: string): TermOutput {
  if (!out || typeof out.value !== 'number' || !Number.isFinite(out.value)) {
    throw new Error(`reward term '${id}' returned a non-finite value (${out?.value})`);
  }
  return out;
}

export async function scorePanelDetailed(
  panel: ResolvedPanel,
  input: ScoringInput,
  resources: ScoringResources,
): Promise<DetailedPanelResult> {
  // The caller's comparator if it named one, else the panel's own (each paper's evaluator).
  const base = buildContext({ ...input, mode: input.mode ?? panel.mode }, resources, inputSuite(panel, input));
  const earlier = new Map<string, TermOutput>();
  const terms: Term[] = [];
  const details: DetailedPanelResult['details'] = [];
  let total = 0;
  for (const t of panel.terms) {
    const failedGate = (t.gate ?? []).find((g) => earlier.get(g)?.passed === false);
    let out: TermOutput;
    if (failedGate !== undefined) {
      out = {
        value: 0,
        explanation: `no reward: gated by '${failedGate}', which failed (${earlier.get(failedGate)!.explanation})`,
        passed: false,
        failure: `gated:${failedGate}`,
      };
    } else {
      const params = { ...(t.definition.defaultParams ?? {}), ...(t.params ?? {}) };
      // Copy descriptors, not values, so the lazy getters stay lazy.
      const ctx = Object.defineProperties(
        { earlier, params },
        Object.getOwnPropertyDescriptors(base),
      ) as unknown as TermContext;
      out = checkOutput(await t.definition.fn(ctx), t.definition.id);
    }
    earlier.set(t.name, out);
    const contribution = t.weight * out.value;
    total += contribution;
    terms.push({ name: t.name, value: out.value, weight: t.weight, contribution, explanation: out.explanation });
    details.push({ passed: out.passed, failure: out.failure, data: out.data });
  }
  // Sums like 0.1 + 0.1 + 1 should read 1.2, not 1.2000000000000002.
  return { panel: panel.name, total: Math.round(total * 1e12) / 1e12, terms, details };
}

export async function scorePanel(
  panel: ResolvedPanel,
  input: ScoringInput,
  resources: ScoringResources,
): Promise<PanelResult> {
  const { panel: name, total, terms } = await scorePanelDetailed(panel, input, resources);
  return { panel: name, total, terms };
}
