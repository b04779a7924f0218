// The reward panel a trajectory file opens on in Reward Diagnostics: the one its trajectories' own protocol trains
// with (the most common protocol in the file), as Replay's `auto` does, so SkyRL trajectories are not scored with
// SQL-Trail's panel unless the user picks it.
import { defaultPanelFor } from '../../core/trajectories/summary';
import type { TrajectoryRecord } from '../../core/trajectories/types';

export function filePanel(records: readonly Pick<TrajectoryRecord, 'protocol'>[]): string {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.protocol.name, (counts.get(r.protocol.name) ?? 0) + 1);
  let protocol = '';
  let most = 0;
  for (const [name, n] of counts)
    if (n > most) {
      most = n;
      protocol = name;
    }
  return defaultPanelFor(protocol);
}
