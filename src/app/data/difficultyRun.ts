// Reading a `quarry bench --samples G` run directory as difficulty estimates: its report.json gives, for every
// question scored, how many of the G samples were right by execution (and, where the run recorded it, by execution
// and MTSQL-R1's string EM both, which the curriculum counts). The run is matched to a dataset by task id
// (`spider:train_spider:17`) and checked against it (same dataset kind, same database per question).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_FILES, type BenchReport } from '../../core/datasetRuns';
import type { Dataset } from '../../core/datasets/types';
import type { QuestionOutcome } from '../../core/training/difficulty';
import { fileSha256 } from '../../core/trajectories/dbHash';
import { DataInputError } from './errors';

export interface DifficultyRun {
  dir: string;
  report: string;
  sha256: string;
  samples: number;
  model: string;
  protocol: { name: string; maxTurns: number | null };
  datasetFile: string;
  complete: boolean;
  /** Task id → outcome and database, for the questions the run scored. */
  outcomes: Map<string, QuestionOutcome & { dbId: string }>;
}

export async function readDifficultyRun(dir: string): Promise<DifficultyRun> {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    /* reported below */
  }
  if (!isDir)
    throw new DataInputError(
      `--difficulty ${dir} is not a directory (pass the --out directory of a \`quarry bench --samples G\` run)`,
    );
  const report = join(dir, BENCH_FILES.report);
  let text: string;
  try {
    text = readFileSync(report, 'utf8');
  } catch {
    throw new DataInputError(
      `${dir} has no ${BENCH_FILES.report}: pass the --out directory of a finished \`quarry bench --samples G\` run`,
    );
  }
  let r: Partial<BenchReport>;
  try {
    r = JSON.parse(text) as Partial<BenchReport>;
  } catch (err) {
    throw new DataInputError(`${report} is not valid JSON: ${(err as Error).message}`);
  }
  if (r.schema !== 'quarry.bench/1' || !Array.isArray(r.questions) || typeof r.samples !== 'number') {
    throw new DataInputError(
      `${report} is not a quarry bench report (schema quarry.bench/1 with questions and samples)`,
    );
  }
  if (r.samples < 2) {
    throw new DataInputError(
      `${report}: the run has ${r.samples} sample per question; pass@G needs G >= 2 (run \`quarry bench --samples G\`)`,
    );
  }
  const outcomes: DifficultyRun['outcomes'] = new Map();
  for (const q of r.questions) {
    if (typeof q?.id !== 'string' || !Array.isArray(q.samples))
      throw new DataInputError(`${report}: a question lacks its id or samples`);
    const withEm = q.samples.every((s) => typeof s.em === 'boolean');
    outcomes.set(q.id, {
      id: q.id,
      correct: q.samples.filter((s) => s.exec === true).length,
      total: q.samples.length,
      ...(withEm ? { correctExEm: q.samples.filter((s) => s.exec === true && s.em === true).length } : {}),
      dbId: q.dbId,
    });
  }
  return {
    dir,
    report,
    sha256: await fileSha256(report),
    samples: r.samples,
    model: String(r.model ?? ''),
    protocol: { name: String(r.protocol?.name ?? ''), maxTurns: r.protocol?.maxTurns ?? null },
    datasetFile: String(r.dataset?.file ?? ''),
    complete: r.complete === true,
    outcomes,
  };
}

/**
 * The run's outcomes for `dataset`'s questions. Throws when the run is over another dataset kind, covers none of
 * these questions, or names another database for one of them.
 */
export function outcomesFor(run: DifficultyRun, dataset: Dataset): Map<string, QuestionOutcome> {
  const kind = [...run.outcomes.keys()][0]?.split(':')[0];
  if (kind !== undefined && kind !== dataset.name) {
    throw new DataInputError(
      `the difficulty run ${run.dir} is over a ${kind} dataset (${run.datasetFile}), not ${dataset.name}`,
    );
  }
  const out = new Map<string, QuestionOutcome>();
  for (const t of dataset.tasks) {
    const o = run.outcomes.get(t.id);
    if (!o) continue;
    if (o.dbId !== t.dbId) {
      throw new DataInputError(
        `the difficulty run ${run.dir} does not match ${dataset.file}: ` +
          `question ${t.id} is on database ${o.dbId} there and ${t.dbId} here`,
      );
    }
    out.set(t.id, {
      id: o.id,
      correct: o.correct,
      total: o.total,
      ...(o.correctExEm !== undefined ? { correctExEm: o.correctExEm } : {}),
    });
  }
  if (out.size === 0) {
    throw new DataInputError(
      `none of the questions of the difficulty run ${run.dir} (over ${run.datasetFile}) is in ${dataset.file}`,
    );
  }
  return out;
}
