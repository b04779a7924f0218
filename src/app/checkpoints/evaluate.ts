// Evaluating a registered model: `quarry bench` (runBenchmark) on a dataset and protocol against the model's spec,
// the run written under .quarry/models/<name>/evals/<dataset>-<protocol>-<K>/ and recorded with the model in the
// registry (report path, dataset, EX). Comparing them is compare.ts.
import { basename, join, resolve } from 'node:path';
import { createModel } from '../../core/models';
import { loadDataset, parseDatasetSpec } from '../../core/datasets';
import { isProtocolName, PROTOCOL_NAMES } from '../../core/agent/protocols';
import { runBenchmark, BENCH_FILES, type BenchProgress } from '../../core/datasetRuns';
import type { BenchReport } from '../../core/datasetRuns/report';
import { ModelRegistry, type Evaluation, type RegisteredModel } from '../../core/training/modelRegistry';
import { quarryPath } from '../../core/workspace/quarryLayout';

interface EvaluateOptions {
  workspace: string;
  name: string;
  /** NAME:FILE, as `quarry bench --dataset` takes it. */
  dataset: string;
  dbDir: string;
  protocol: string;
  samples?: number;
  limit?: number;
  jobs?: number;
  maxTurns?: number;
  resume?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: BenchProgress) => void;
}

function evalDir(workspace: string, name: string, datasetFile: string, protocol: string, samples: number): string {
  const stem = basename(datasetFile)
    .replace(/\.[^.]+$/, '')
    .replace(/[^\w.-]+/g, '-');
  return quarryPath(workspace, 'models', name, 'evals', `${stem}-${protocol}-k${samples}`);
}

export async function evaluateModel(
  o: EvaluateOptions,
): Promise<{ model: RegisteredModel; report: BenchReport; dir: string }> {
  const registry = new ModelRegistry(o.workspace);
  const entry = registry.require(o.name);
  if (!isProtocolName(o.protocol))
    throw new Error(`the protocol must be one of ${PROTOCOL_NAMES.join(', ')}, got '${o.protocol}'`);
  const spec = parseDatasetSpec(o.dataset);
  const file = resolve(o.workspace, spec.file);
  const dataset = loadDataset(spec.name, file, resolve(o.workspace, o.dbDir));
  const samples = o.samples ?? 1;
  const dir = evalDir(o.workspace, o.name, file, o.protocol, samples);
  const model = await createModel(entry.spec, { cwd: o.workspace });
  let report: BenchReport;
  try {
    report = await runBenchmark({
      dataset,
      model,
      protocol: o.protocol,
      samples,
      limit: o.limit,
      jobs: o.jobs,
      maxTurns: o.maxTurns,
      outDir: dir,
      resume: o.resume,
      signal: o.signal,
      onProgress: o.onProgress,
    });
  } finally {
    await model.close();
  }
  const evaluation: Evaluation = {
    report: join(dir, BENCH_FILES.report),
    dataset: `${spec.name}:${file}`,
    protocol: o.protocol,
    samples,
    items: report.items,
    ex: { ...report.ex },
    at: new Date().toISOString(),
  };
  return { model: registry.addEvaluation(o.name, evaluation), report, dir };
}
