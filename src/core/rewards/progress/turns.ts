// The SQL trajectory Y = (y^(1), …, y^(K)) a Progress-SQL panel scores: one SQL per assistant turn, in order (a turn
// that produced no SQL — an invalid action — is y = null: not executable, F = 0). Turns that are not SQL attempts by
// design (MTSQL-R1's memory_retrieve) are left out, so the panel can also score other protocols' trajectories.
// Without turns (a bare prediction or an empty record) the trajectory is the one final SQL.
import type { TermContext } from '../types';

export function sqlTrajectory(ctx: Pick<TermContext, 'trajectory' | 'predSql'>): Array<string | null> {
  const turns = (ctx.trajectory?.turns ?? []).filter((t) => t.action?.kind !== 'memory');
  if (turns.length === 0) return [ctx.predSql];
  return turns.map((t) => t.action?.sql ?? null);
}

/**
 * E(y) (§4.2, eq. 3): "true if y can be executed by the database engine without syntax or runtime errors" — the SQL
 * as written, not as a comparison mode rewrites it (spider mode joins "! =" and drops DISTINCT). A timeout is not
 * executable.
 */
export async function executable(ctx: TermContext, sql: string | null): Promise<boolean> {
  if (sql === null || sql.trim() === '') return false;
  return (await ctx.resources.exec(ctx.input.dbPath, sql)).ok;
}

/** k*: the first turn (1-based) whose result matches the gold's, or null. */
export async function firstSuccess(ctx: TermContext, ys: Array<string | null>): Promise<number | null> {
  for (let i = 0; i < ys.length; i++) {
    const y = ys[i];
    if (y === null || y.trim() === '') continue;
    if ((await ctx.verdict(y)).correct) return i + 1;
  }
  return null;
}
