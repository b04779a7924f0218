// The reward engine's contract. A panel is data (a list of named, weighted terms); each term's computation is a
// function registered under an id (`sqltrail.exec`, `mtir.result`, `progress.align`, …). The engine resolves a
// panel, builds one TermContext per scoring, runs the terms in panel order and sums weight·value.
//
// Stability: this file is read by other modules (the progress panel, diagnostics, the trainer). Extend additively.
import type { TrajectoryRecord } from '../trajectories/types';
import type { ExecResult } from '../db/types';
import type { EvalMode, EvalModeName } from '../eval/modes';
import type { ExecReason } from '../eval/execution';
import type { PanelSuiteUse, TestSuite } from './testSuite';

/**
 * SQL-Trail's difficulty levels (App. A.4, eq. 7): Spider hardness with `easy` called `simple`.
 * `difficultyFromHardness` in difficulty.ts maps one to the other.
 */
export type Difficulty = 'simple' | 'medium' | 'hard' | 'extra';
export const DIFFICULTIES: readonly Difficulty[] = ['simple', 'medium', 'hard', 'extra'];

// ---------------------------------------------------------------------------------------------------------------
// Results

/** One term of a scored panel. `contribution` = `weight` · `value`. */
export interface Term {
  /** The term's name in the panel, as its paper names it (`exec`, `turns`, `schema`, `bigram`, `syntax`, `format`…). */
  name: string;
  value: number;
  weight: number;
  contribution: number;
  /** One line: why the term has this value ("final SQL returns the gold rows", "3 turns > 2 allowed for simple"). */
  explanation: string;
}

/** A scored panel: `total` is the sum of the terms' contributions. */
export interface PanelResult {
  panel: string;
  total: number;
  terms: Term[];
}

/** What a term function returns; the engine adds name, weight and contribution. */
export interface TermOutput {
  value: number;
  explanation: string;
  /**
   * Whether the condition this term checks holds (format valid, SQL executable, result correct…). Gated terms of
   * the same panel read it: a term listing this one in `gate` is not computed when `passed` is false. Terms with no
   * pass/fail meaning (similarities) leave it undefined, which never gates.
   */
  passed?: boolean;
  /** Short machine-readable reason when the check failed (`missing-solution`, `pred-error`, `gold-timeout`…). */
  failure?: string;
  /** Structured detail for diagnostics views (per-step values, ODT trees, tags). Never part of the CLI's JSON terms. */
  data?: Record<string, unknown>;
}

/** A PanelResult with each term's extra outputs kept, for integrity checks and diagnostics. */
export interface DetailedPanelResult extends PanelResult {
  details: Array<Pick<TermOutput, 'passed' | 'failure' | 'data'>>;
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs

/**
 * One thing to score. Give either a trajectory (its `finalSql` is the prediction; turns, actions and verdicts feed
 * the multi-turn terms) or a bare predicted SQL (terms about turns/format then explain that there is no trajectory).
 */
export interface ScoringInput {
  goldSql: string;
  /** Absolute path of the SQLite file both queries run on. */
  dbPath: string;
  trajectory?: TrajectoryRecord | null;
  /** Used when no trajectory is given. */
  predSql?: string | null;
  /** Defaults to the trajectory's task difficulty mapped through difficultyFromHardness; null when unknown. */
  difficulty?: Difficulty | null;
  /** Result comparison mode of the evaluator (src/core/eval/modes.ts). Default `spider`. */
  mode?: EvalModeName;
  /**
   * Turn budget T (SQL-Trail's r_turns for hard/extra); default the trajectory's protocol.budget, then
   * protocol.config.maxTurns, else 10.
   */
  turnBudget?: number;
  /**
   * A test suite (from the command line, never from a panel or a request) whose databases for this item's db_id
   * stand in for dbPath in the execution terms, as the panel allows (ResolvedPanel.testSuite).
   */
  testSuite?: TestSuite | null;
  /** The db_id naming the item's folder in the test suite; default dbPath's file name without its extension. */
  dbId?: string | null;
}

/** How a verdict over a test suite went (ExecOutcome.suite). */
export interface SuiteCheck {
  /** Databases of the suite the answer is checked on. */
  databases: number;
  /** Whether the answer matched on the item's own database (the single-database verdict). */
  singleCorrect: boolean;
  /** The suite database (`<db_id>/<file>`) where the answer first disagreed with the gold; absent when none did. */
  disagreed?: string;
}

/** How one predicted SQL compares with the gold on the input's database (the evaluator's comparator and reasons). */
export interface ExecOutcome {
  /** The prediction as given (null when there was none). */
  sql: string | null;
  /** Results equal under the chosen mode. */
  correct: boolean;
  /**
   * `match`, or why not: a CompareOutcome, `pred-error`, `pred-timeout`, `gold-error`, `gold-timeout`,
   * `empty-prediction`…
   */
  reason: ExecReason;
  detail?: string;
  /** The prediction's own run (null when it was not run: no prediction). */
  pred: ExecResult | null;
  /** The gold run (null when there was no need to run it). */
  gold: ExecResult | null;
  /** The gold result has no rows: an empty prediction result matches for free. */
  goldEmpty: boolean;
  /** Set when the answer was checked over a test suite: how many databases, and which one disagreed. */
  suite?: SuiteCheck;
}

/**
 * Caches shared across many scorings (a whole `quarry score` run, a benchmark, a training step). Gold results and
 * gold parses are computed once per gold; `exec` is memoised per (db, sql as run).
 */
export interface ScoringResources {
  /** Runs one statement (full result, no row cap) through the sandbox pool, once per (db, sql). */
  exec(db: string, sql: string): Promise<ExecResult>;
  /**
   * Memoises any derived value, e.g. `memo('clauses', goldSql, () => extractClauses(goldSql))`. Namespaces keep
   * term families apart (`bigrams`, `schemaItems`, `clauses`, `odt`…).
   */
  memo<T>(namespace: string, key: string, compute: () => T): T;
  /** Per-statement execution budget, ms. */
  timeoutMs: number;
}

/** What a term function sees. */
export interface TermContext {
  input: Readonly<ScoringInput>;
  /** The prediction: the trajectory's finalSql, else input.predSql; null when there is none. */
  predSql: string | null;
  trajectory: TrajectoryRecord | null;
  difficulty: Difficulty | null;
  /** Where `difficulty` came from: given, the trajectory's task, Spider hardness of the gold query, or unknown. */
  difficultySource?: 'input' | 'trajectory' | 'gold-hardness' | 'unknown';
  /** Turn budget T (resolved as described on ScoringInput.turnBudget). */
  turnBudget: number;
  mode: EvalMode;
  resources: ScoringResources;
  /**
   * Compares any SQL's result with the gold's on input.dbPath (memoised per SQL). Null sql → reason
   * `missing-prediction`.
   */
  verdict(sql: string | null): Promise<ExecOutcome>;
  /** Outputs of the terms computed before this one in the panel, by panel term name. */
  earlier: ReadonlyMap<string, TermOutput>;
  /** The panel entry's params merged over the term definition's defaults. */
  params: Readonly<Record<string, unknown>>;
}

type TermFunction = (ctx: TermContext) => TermOutput | Promise<TermOutput>;

/** A built-in term computation, registered under `id` (registry.ts registerTerm). */
export interface TermDefinition {
  /** `<family>.<name>`, e.g. `sqltrail.turns`. Panel files refer to terms by this id. */
  id: string;
  /** One line for `--help` and docs. */
  description: string;
  /** Paper and section the definition follows. */
  source: string;
  defaultParams?: Record<string, unknown>;
  fn: TermFunction;
}

// ---------------------------------------------------------------------------------------------------------------
// Panels are data: this is also the JSON format of a user's panel file.

interface PanelTermSpec {
  /** Name in results (`exec`, `turns`…). Unique within the panel. */
  name: string;
  /** Registered term id (`sqltrail.exec`). */
  term: string;
  weight: number;
  /** Overrides of the term definition's defaultParams. */
  params?: Record<string, unknown>;
  /**
   * Names of earlier terms of this panel that must have passed: if any of them reported passed === false, this term
   * is not computed and scores 0 with an explanation naming the failed gate (MTIR-SQL's "no later reward").
   */
  gate?: string[];
}

/**
 * A panel, built-in or from a user's file. With `extends`, start from that panel: `terms` (if given) replace its
 * term list, `weights` and `params` override per term name.
 *
 * Example file: { "name": "exec-heavy", "extends": "sqltrail", "weights": { "exec": 10, "turns": 0 } }
 */
export interface PanelSpec {
  name: string;
  description?: string;
  /** Paper and section, for built-ins. */
  source?: string;
  extends?: string;
  /**
   * The result comparator the panel's execution terms use (`spider`, `bird`, `omnisql`; src/core/eval/modes.ts).
   * Inherited through `extends`; a scoring call's own mode (`--mode`) overrides it. Default `spider`.
   */
  mode?: EvalModeName;
  /**
   * The execution terms and a test suite: `{"testSuite": true}` requires one (scoring is refused without it),
   * `false` never uses one, absent uses the suite the command was given where it has the item's database. The suite's
   * folder itself comes only from the command line (--test-suite TSDIR), never from a panel file.
   */
  exec?: { testSuite?: boolean };
  terms?: PanelTermSpec[];
  weights?: Record<string, number>;
  params?: Record<string, Record<string, unknown>>;
}

/** A panel with `extends` applied and every term id checked against the registry. */
export interface ResolvedPanel {
  name: string;
  description: string;
  source: string;
  /** The result comparator this panel scores with unless the caller names one. */
  mode: EvalModeName;
  /** How the execution terms use a test suite (PanelSpec.exec.testSuite); absent means `auto`. */
  testSuite?: PanelSuiteUse;
  terms: Array<PanelTermSpec & { definition: TermDefinition }>;
}
