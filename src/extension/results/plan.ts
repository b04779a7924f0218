// The query plan of a statement for a panel: EXPLAIN QUERY PLAN through the shared sandbox pool (the same read-only
// guard and time limit as running it), as the PlanOutcome the Query Results panel and Ask's cards draw.
import type { Services } from '../services';
import { planOutcome, type PlanOutcome } from '../../protocol/plan';

export async function planFor(services: Services, db: string, sql: string): Promise<PlanOutcome> {
  const { explainQueryPlan } = await import('../../core/db/queryPlan');
  const r = await explainQueryPlan(await services.pool(), db, sql, { timeoutMs: services.settings().query.timeoutMs });
  if (!r.ok) services.log.info(`query plan: ${r.errorClass}: ${r.error}`);
  return planOutcome(r);
}
