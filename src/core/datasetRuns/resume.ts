// Resuming a benchmark run: the episodes already in DIR/trajectories.jsonl are reused when they were made with the
// same dataset, model, protocol and sampling, so an interrupted run only runs what is missing. Failed episodes are
// dropped and run again (a server that was down is the usual reason to resume).
import { existsSync } from 'node:fs';
import { readTrajectories } from '../trajectories/reader';
import { openAtomicFile } from '../util/atomicWrite';
import type { TrajectoryRecord } from '../trajectories/types';

interface RunIdentity {
  datasetFile: string;
  model: string;
  protocol: string;
  /** null: the protocol's own budget. */
  maxTurns: number | null;
  /** Temperature of the sampled runs (samples 1 and up). */
  temperature: number;
  /** Protocol config entries the episodes must have been run with (progress: `feedback: 'none'`). */
  config?: Record<string, unknown>;
}

/** The file was written by a run with other settings: mixing them would make the scores meaningless. */
export class ResumeMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResumeMismatchError';
  }
}

export const unitKey = (taskId: string, sample: number): string => `${taskId}\u0000${sample}`;

function mismatch(r: TrajectoryRecord, want: RunIdentity): string | null {
  const meta = r.meta as { datasetFile?: unknown };
  if (meta.datasetFile !== want.datasetFile) return `dataset ${String(meta.datasetFile)}, not ${want.datasetFile}`;
  if (r.model.spec !== want.model) return `model ${r.model.spec}, not ${want.model}`;
  if (r.protocol.name !== want.protocol) return `protocol ${r.protocol.name}, not ${want.protocol}`;
  if (want.maxTurns !== null && r.protocol.config.maxTurns !== want.maxTurns)
    return `max turns ${String(r.protocol.config.maxTurns)}, not ${want.maxTurns}`;
  for (const [key, value] of Object.entries(want.config ?? {})) {
    const got = r.protocol.config[key];
    if (got !== value) return `protocol config ${key} ${JSON.stringify(got)}, not ${JSON.stringify(value)}`;
  }
  const t = r.model.sampling.temperature ?? 0;
  const expected = r.sample === 0 ? 0 : want.temperature;
  if (t !== expected) return `sample ${r.sample} at temperature ${t}, not ${expected}`;
  return null;
}

/**
 * Reads `path` (when it exists), keeps the finished episodes of this run's settings (the last one per question and
 * sample), rewrites the file with exactly those, and returns them by unitKey. Throws ResumeMismatchError when any
 * record comes from other settings.
 */
export async function loadResumable(path: string, want: RunIdentity): Promise<Map<string, TrajectoryRecord>> {
  const kept = new Map<string, TrajectoryRecord>();
  if (!existsSync(path)) return kept;
  const { records } = await readTrajectories(path);
  for (const r of records) {
    const why = mismatch(r, want);
    if (why)
      throw new ResumeMismatchError(
        `${path} holds episodes of another run (${why}); drop --resume to start afresh, or use another --out`,
      );
    if (r.task.id === null || r.end === 'cancelled' || r.end === 'error') continue;
    kept.set(unitKey(r.task.id, r.sample), r);
  }
  // Rewritten through a temporary file, so an interruption here leaves the old file whole.
  const out = await openAtomicFile(path);
  try {
    for (const r of kept.values()) await out.write(JSON.stringify(r) + '\n');
    await out.commit();
  } catch (err) {
    await out.abort();
    throw err;
  }
  return kept;
}
