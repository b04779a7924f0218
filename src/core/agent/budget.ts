// How many assistant turns an episode gets: the protocol's fixed budget T, or — for sqltrail with `adaptive: true` —
// SQL-Trail's difficulty-aware budget (the thresholds of its turn reward, App. A.4 Eq. 7), defined by that protocol.
import type { ProtocolConfig, ProtocolName, Task } from './types';
import { sqlTrailBudget } from './protocols/sqltrail';

/** The turn budget of one episode: `config.maxTurns`, scaled by the task's difficulty for adaptive sqltrail. */
export function turnBudget(protocol: ProtocolName, config: ProtocolConfig, task: Task): number {
  if (protocol === 'sqltrail' && config.adaptive === true) return sqlTrailBudget(task.difficulty, config.maxTurns);
  return config.maxTurns;
}
