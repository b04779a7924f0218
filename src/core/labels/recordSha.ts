// A fingerprint of one trajectory record, kept with its label: the id says which trajectory, the fingerprint says
// whether it is still the same one (a rerun with a reused id, a hand-edited file).
import { createHash } from 'node:crypto';
import type { TrajectoryRecord } from '../trajectories/types';

/** sha256 (hex) of the record serialised as JSON.stringify writes it (the writer's own line format). */
export function recordSha(record: TrajectoryRecord): string {
  return createHash('sha256').update(JSON.stringify(record)).digest('hex');
}
