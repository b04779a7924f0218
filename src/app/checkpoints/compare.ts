// Comparing registered models: each model's latest evaluation on the same dataset file (its bench report.json and
// the run's trajectories), compared by src/core/training/checkpointCompare.ts. Reads files only: no model runs here.
import { dirname, join, resolve } from 'node:path';
import type { BenchReport } from '../../core/datasetRuns/report';
import { ModelRegistry, type Evaluation, type RegisteredModel } from '../../core/training/modelRegistry';
import { readRegularFileSync } from '../../core/training/boundedRead';
import {
  compareCheckpoints,
  type CheckpointComparison,
  type CompareInput,
} from '../../core/training/checkpointCompare';

/** The file a bench run writes its trajectories to, beside report.json (BENCH_FILES.trajectories). */
const TRAJECTORIES = 'trajectories.jsonl';
/** The most of a report.json read (its path comes from models.json). */
const MAX_REPORT_BYTES = 256 << 20;

/** A model's latest evaluation on a dataset (NAME:FILE or just FILE, matched on the resolved file), or undefined. */
function latestEvaluation(m: RegisteredModel, workspace: string, dataset: string): Evaluation | undefined {
  const colon = dataset.indexOf(':');
  const file = resolve(workspace, /^[a-z]+:/.test(dataset) && colon > 0 ? dataset.slice(colon + 1) : dataset);
  return m.evaluations.filter((e) => e.dataset.slice(e.dataset.indexOf(':') + 1) === file).at(-1);
}

/** Each model's latest evaluation on the dataset, compared; a model never evaluated on it is an error naming it. */
export function compareModels(
  workspace: string,
  names: readonly string[],
  dataset: string,
): {
  comparison: CheckpointComparison;
  inputs: CompareInput[];
} {
  const registry = new ModelRegistry(workspace);
  const inputs: CompareInput[] = names.map((name) => {
    const m = registry.require(name);
    const ev = latestEvaluation(m, workspace, dataset);
    if (!ev)
      throw new Error(
        `${name} has no evaluation on ${dataset}: ` +
          `run \`quarry checkpoints eval ${name} --dataset ${dataset} …\` first`,
      );
    // The report's path is models.json's: read only a regular file, capped (a pipe there would block the compare).
    const report = JSON.parse(readRegularFileSync(ev.report, MAX_REPORT_BYTES)) as BenchReport;
    return { name, report, trajectories: join(dirname(ev.report), TRAJECTORIES) };
  });
  return { comparison: compareCheckpoints(inputs), inputs };
}
