// The built-in panels, as data (the same shape as a user's panel file), and the term functions they use.
import { registerPanel, registerTerm } from './registry';
import { execMatch, formatValid, sqlBigram, sqlExecutable, sqlSchema } from './terms/common';
import { sqltrailTurns } from './terms/sqltrail';
import { mtsqlr1Clause, mtsqlr1Em, mtsqlr1Verify } from './terms/mtsqlr1';
import type { PanelSpec, TermDefinition } from './types';
import { PROGRESS_ONESHOT_PANEL, PROGRESS_PANEL, PROGRESS_TERMS } from './progress';

export const BUILTIN_TERMS: TermDefinition[] = [
  execMatch,
  sqlExecutable,
  formatValid,
  sqlBigram,
  sqlSchema,
  sqltrailTurns,
  mtsqlr1Em,
  mtsqlr1Clause,
  mtsqlr1Verify,
  ...PROGRESS_TERMS,
];

/** SkyRL-SQL §4.1: −1 invalid format; 0 valid but wrong; 1 valid and correct — as format (−1/0) + gated exec (0/1). */
const SKYRL_PANEL: PanelSpec = {
  name: 'skyrl',
  description: '−1 if the format is invalid, 0 if valid but the result is wrong, 1 if valid and correct',
  source: 'SkyRL-SQL §4.1',
  // skyrl-gym's reward (skyrl_gym/envs/sql/utils.py, calculate_reward_single) compares frozenset(fetchall()) of both
  // queries with a 30 s limit: BIRD's rule.
  mode: 'bird',
  terms: [
    { name: 'format', term: 'format.valid', weight: 1, params: { valid: 0, invalid: -1 } },
    { name: 'exec', term: 'exec.match', weight: 1, gate: ['format'] },
  ],
};

/** SQL-Trail §3.3.2 / App. A.4: R = 5·r_exec + 2·r_turns + r_schema + r_bigram + r_syntax + r_format. */
const SQLTRAIL_PANEL: PanelSpec = {
  name: 'sqltrail',
  description: 'composite panel: execution, difficulty-aware turn budget, schema/bigram Jaccard, syntax, format',
  source: 'SQL-Trail §3.3.2, App. A.4',
  // The paper says only "execution result matches"; Spider is its training data and main benchmark.
  mode: 'spider',
  terms: [
    { name: 'exec', term: 'exec.match', weight: 5 },
    { name: 'turns', term: 'sqltrail.turns', weight: 2 },
    { name: 'schema', term: 'sql.schema', weight: 1 },
    { name: 'bigram', term: 'sql.bigram', weight: 1 },
    { name: 'syntax', term: 'sql.executable', weight: 1 },
    { name: 'format', term: 'format.valid', weight: 1 },
  ],
};

/**
 * MTIR-SQL §3.3: R_f ±0.1; R_e 0.1 / −0.1 (0 when the format is wrong); R_r 1 / −1 (0 when format or execution fails).
 */
const MTIR_PANEL: PanelSpec = {
  name: 'mtir',
  description: 'format ±0.1, execution ±0.1, result ±1, each later reward withheld once format or execution fails',
  source: 'MTIR-SQL §3.3, eqs. 5–7',
  // The paper names no comparator; Spider's rules (its SPIDER Dev figure is test-suite EX).
  mode: 'spider',
  terms: [
    { name: 'format', term: 'format.valid', weight: 1, params: { valid: 0.1, invalid: -0.1 } },
    { name: 'exec', term: 'sql.executable', weight: 1, params: { ok: 0.1, fail: -0.1 }, gate: ['format'] },
    { name: 'result', term: 'exec.match', weight: 1, params: { match: 1, miss: -1 }, gate: ['format', 'exec'] },
  ],
};

/**
 * MTSQL-R1 §3.3.2: R_all = w1·R_EX + w2·R_EM + w3·R_Propose/Self-Correct + w4·(R_E-Verify + R_M-Verify). The paper
 * picks w1..w4 by grid search and does not publish them; all four default to 1 (override with "weights").
 */
const MTSQLR1_PANEL: PanelSpec = {
  name: 'mtsqlr1',
  description: 'outcome EX and EM plus process rewards: clause F1 of proposals, E-VERIFY table, M-VERIFY F1',
  source: 'MTSQL-R1 §3.3.2',
  // §4: EX on SParC/CoSQL "using the same definitions as in our reward design": Spider's test-suite rules.
  mode: 'spider',
  terms: [
    { name: 'ex', term: 'exec.match', weight: 1 },
    { name: 'em', term: 'mtsqlr1.em', weight: 1 },
    { name: 'clause', term: 'mtsqlr1.clause', weight: 1 },
    { name: 'verify', term: 'mtsqlr1.verify', weight: 1 },
  ],
};

export const BUILTIN_PANELS: PanelSpec[] = [
  SKYRL_PANEL,
  SQLTRAIL_PANEL,
  MTIR_PANEL,
  MTSQLR1_PANEL,
  PROGRESS_PANEL,
  PROGRESS_ONESHOT_PANEL,
];
/** Their names, in that order: the list the CLI and the editor offer. */
export const BUILTIN_PANEL_NAMES: readonly string[] = BUILTIN_PANELS.map((p) => p.name);

let registered = false;

/** Registers every built-in term and panel (idempotent). */
export function registerBuiltins(): void {
  if (registered) return;
  registered = true;
  for (const t of BUILTIN_TERMS) registerTerm(t);
  for (const p of BUILTIN_PANELS) registerPanel(p);
}
