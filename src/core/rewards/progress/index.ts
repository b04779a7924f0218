// Progress-SQL's panel (§4.2, App. B Table 4, ODT of App. D): R(Y) = R_fmt + R_exec + R_late + R_align.
import type { PanelSpec } from '../types';

export { PROGRESS_TERMS, progressFormat, progressExec, progressLate, progressAlign } from './terms';
export { alignReward, alignmentOf, goldTreeOf, ALIGN_DEFAULTS } from './alignment';
export { sqlTrajectory, executable, firstSuccess } from './turns';
export { checkProgressFormat } from './format';

/** Weights of App. B, Table 4: ω_fmt = 0.5, ω_acc = 2.0; keep/recover/deteriorate and ω±_align as term params. */
export const PROGRESS_PANEL: PanelSpec = {
  name: 'progress',
  description: 'format 0.5; executability keep 0.5 / recover 0.25 / deteriorate −0.25; 2.0·0.5^(k*−1) for the first correct turn; alignment progress Δ (ODT + bigrams)',
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
