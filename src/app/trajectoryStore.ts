// Where asked questions' trajectories go: one policy for the CLI, the Ask panel and @quarry. Every episode is
// appended to the workspace's `.quarry/trajectories/` (one JSONL file there) unless saving is turned off (the
// `quarry.trajectories.save` setting, `quarry ask --no-save`).
import { mkdir } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { TrajectoryWriter } from '../core/trajectories/writer';
import type { TrajectoryRecord } from '../core/trajectories/types';
import { QUARRY_LAYOUT } from '../core/workspace/quarryLayout';

/** The store, relative to the workspace (the CLI's working directory): the `quarry.trajectories.store` default. */
export const DEFAULT_TRAJECTORY_STORE = QUARRY_LAYOUT.askedTrajectories;

/** The store file for `workspace`: `store` if absolute, else under the workspace (default DEFAULT_TRAJECTORY_STORE). */
export function trajectoryStorePath(workspace: string, store: string = DEFAULT_TRAJECTORY_STORE): string {
  return isAbsolute(store) ? store : join(workspace, store);
}

/** Appends one record to `path` (its folder is created), whole, beside any other writer. */
export async function appendTrajectory(record: TrajectoryRecord, path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const writer = await TrajectoryWriter.open(path);
  try {
    await writer.write(record);
  } finally {
    await writer.close();
  }
}
