// A query plan as the Query Results panel and Ask's cards receive it: the tree and warnings of src/core/db/queryPlan
// (plain JSON), or why there is none in the sandbox's words. Nothing here imports `vscode` or the DOM.
import type { PlanResult, QueryPlan } from '../core/db/queryPlan';

export type { PlanNode } from '../core/db/queryPlan';

export type PlanOutcome = { ok: true; plan: QueryPlan } | { ok: false; errorClass: string; message: string };

/** The outcome to send for a plan result (timings and open-error details stay on the host). */
export function planOutcome(r: PlanResult): PlanOutcome {
  return r.ok ? { ok: true, plan: r.plan } : { ok: false, errorClass: r.errorClass, message: r.error };
}
