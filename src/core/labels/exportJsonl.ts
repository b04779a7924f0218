// Writing the exports: SFT examples and RL prompts as JSONL files, each written to a temporary file beside the
// target and renamed into place, so a failed or killed export never leaves half a training file behind.
import { existsSync } from 'node:fs';
import { writeJsonl } from '../util/atomicWrite';
import { readTrajectories } from '../trajectories/reader';
import type { TrajectoryRecord } from '../trajectories/types';
import { toRlPrompts, type RlSkip } from './rl';
import { toSftExample, type SftOptions } from './sft';
import type { Label } from './types';

export interface ExportSummary {
  out: string;
  written: number;
  /** Trajectories (or tasks) left out, with why. */
  skipped: { id: string; reason: string }[];
}

/** SFT examples for `records` that have a usable label, written to `out`. */
export async function exportSft(
  records: readonly TrajectoryRecord[],
  labels: ReadonlyMap<string, Label>,
  out: string,
  opts: SftOptions = {},
): Promise<ExportSummary> {
  const rows: unknown[] = [];
  const skipped: ExportSummary['skipped'] = [];
  const seen = new Set<string>();
  for (const r of records) {
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    const o = toSftExample(r, labels.get(r.id), opts);
    if (o.ok) rows.push(o.example);
    else if (labels.has(r.id)) skipped.push({ id: r.id, reason: o.reason });
  }
  await writeJsonl(out, rows);
  return { out, written: rows.length, skipped };
}

/** RL prompts for the tasks of `records` (see toRlPrompts), written to `out`. */
export async function exportRlPrompts(
  records: readonly TrajectoryRecord[],
  labels: ReadonlyMap<string, Label>,
  out: string,
): Promise<ExportSummary> {
  const { prompts, skipped } = toRlPrompts(records, labels);
  await writeJsonl(out, prompts);
  return { out, written: prompts.length, skipped: skipped as RlSkip[] };
}

export interface LabeledRecords {
  records: TrajectoryRecord[];
  /** Labels whose trajectory could not be found (file gone, id not in it), with why. */
  missing: { id: string; reason: string }[];
}

/** The trajectories the labels point at, read from each label's file (each file once). */
export async function readLabeledRecords(labels: readonly Label[]): Promise<LabeledRecords> {
  const byFile = new Map<string, Label[]>();
  for (const l of labels) {
    const g = byFile.get(l.file);
    if (g) g.push(l);
    else byFile.set(l.file, [l]);
  }
  const records: TrajectoryRecord[] = [];
  const missing: LabeledRecords['missing'] = [];
  for (const [file, group] of byFile) {
    if (!existsSync(file)) {
      for (const l of group) missing.push({ id: l.trajectoryId, reason: `trajectory file not found: ${file}` });
      continue;
    }
    const read = await readTrajectories(file, { onInvalid: 'collect' });
    const byId = new Map(read.records.map((r) => [r.id, r]));
    for (const l of group) {
      const r = byId.get(l.trajectoryId);
      if (r) records.push(r);
      else missing.push({ id: l.trajectoryId, reason: `not in ${file} any more` });
    }
  }
  return { records, missing };
}
