// Everything Quarry keeps in a workspace's `.quarry/` folder, named once: the trajectory store, labels, jobs and their
// targets, launches, made data, the model registry and its models (evals, compare files). Every reader and writer
// takes its path from here. These paths are on users' disks: renaming one loses their files.
import { join } from 'node:path';

/** The folder's own name. */
export const QUARRY_DIR = '.quarry';

/** Each path, relative to the workspace (POSIX separators: also how help texts and settings show them). */
export const QUARRY_LAYOUT = {
  /** Job targets (ssh, Slurm, Ray hosts) by name. */
  targets: `${QUARRY_DIR}/targets.json`,
  /** One folder per job: jobs/<id>/job.json, logs, out/. */
  jobs: `${QUARRY_DIR}/jobs`,
  /** Launches the Train wizard writes: launches/<recipe>-<engine>-<time>/. */
  launches: `${QUARRY_DIR}/launches`,
  /** Data the Train wizard makes: data/<kind>-<name>-<time>/. */
  data: `${QUARRY_DIR}/data`,
  /** Saved trajectory files (Ask, replays). */
  trajectories: `${QUARRY_DIR}/trajectories`,
  /** The trajectory store Ask and the MCP server append to, unless told another. */
  askedTrajectories: `${QUARRY_DIR}/trajectories/asked.jsonl`,
  /** The label store (SQLite). */
  labels: `${QUARRY_DIR}/labels.sqlite`,
  /** The model registry. */
  modelsRegistry: `${QUARRY_DIR}/models.json`,
  /** Loaded models: models/<name>/ (exported files, evals/). */
  models: `${QUARRY_DIR}/models`,
  /** Pairs of episodes opened side by side by Compare Checkpoints. */
  modelCompare: `${QUARRY_DIR}/models/compare`,
} as const;

type QuarryPlace = keyof typeof QUARRY_LAYOUT;

/** The absolute path of `place` in `workspace`, with `more` segments below it (e.g. a job id, a model name). */
export function quarryPath(workspace: string, place: QuarryPlace, ...more: string[]): string {
  return join(workspace, QUARRY_LAYOUT[place], ...more);
}

/** Whether `path` lies inside a `.quarry` folder (any depth, either separator). */
export function isQuarryOwnPath(path: string): boolean {
  return path.split(/[\\/]/).includes(QUARRY_DIR);
}
