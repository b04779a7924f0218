// The job panel's registration in the panel kit (src/extension/webviews/kit.ts): view type `quarry.jobs`, app
// webview/jobs/, wire types src/protocol/jobs.ts, saved state checked by jobsRestore. One panel per job, keyed by its
// id.
import { JOBS_RULES, jobsRestore, type ToHost } from '../../protocol/jobs';
import type { PanelKind } from '../webviews/kit';

export const JOBS: PanelKind<ToHost, { jobId: string; overlayId: string | null }> = {
  name: 'jobs',
  title: 'Job',
  rules: JOBS_RULES,
  restore: jobsRestore,
};
