// Progress-SQL's panel (§4.2, App. B Table 4, ODT of App. D): R(Y) = R_fmt + R_exec + R_late + R_align; and the
// single-turn one-shot baseline it is compared with in App. E.1 (Figure 4, and the Single-turn RL ablation).
import type { PanelSpec } from '../types';

export { PROGRESS_TERMS } from './terms';
export { alignReward } from './alignment';
export { checkProgressFormat } from './format';

/** Weights of App. B, Table 4: ω_fmt = 0.5, ω_acc = 2.0; keep/recover/deteriorate and ω±_align as term params. */
export const PROGRESS_PANEL: PanelSpec = {
  name: 'progress',
  description:
    'format 0.5; executability keep 0.5 / recover 0.25 / deteriorate −0.25; 2.0·0.5^(k*−1) for the first ' +
    'correct turn; alignment progress Δ (ODT + bigrams)',
  source: 'Progress-SQL §4.2, App. B (Table 4), App. D',
  // App. B, "Evaluation Setup": "We follow the evaluation scripts and protocol released by OmniSQL" (BIRD's set
  // comparison, OmniSQL's 10 s limit).
  mode: 'omnisql',
  terms: [
    { name: 'fmt', term: 'progress.format', weight: 0.5 },
    { name: 'exec', term: 'progress.exec', weight: 1, params: { keep: 0.5, recover: 0.25, deteriorate: -0.25 } },
    { name: 'late', term: 'progress.late', weight: 2.0, params: { gamma: 0.5 } },
    { name: 'align', term: 'progress.align', weight: 1, params: { positive: 1.0, negative: -0.25 } },
  ],
};

/**
 * App. E.1: "The single-turn baseline generates one SQL prediction per rollout and assigns a score of 2.0 if the
 * generated SQL matches the gold execution result, 0.5 if the SQL is executable, and 0.5 if the output follows the
 * required format." Three independent additive terms (a correct, executable, well-formed answer scores 3.0); the
 * format is App. F's output format, as R_fmt checks it. For ablations against the progressive reward.
 */
export const PROGRESS_ONESHOT_PANEL: PanelSpec = {
  name: 'progress-oneshot',
  description:
    'single-turn one-shot baseline: 2.0 if the result matches the gold, 0.5 if the SQL executes, ' +
    '0.5 if the output follows the format',
  source: 'Progress-SQL App. E.1',
  // The same comparator as the progress panel (App. B: OmniSQL's scripts), so the ablation changes only the reward.
  mode: 'omnisql',
  terms: [
    { name: 'exec', term: 'exec.match', weight: 2.0 },
    { name: 'executable', term: 'sql.executable', weight: 0.5 },
    { name: 'fmt', term: 'progress.format', weight: 0.5 },
  ],
};
