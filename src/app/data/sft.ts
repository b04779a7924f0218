// `quarry data sft`: multi-turn SFT data from trajectory files (a `quarry bench` run, `quarry ask`, the editor's
// store) and, optionally, the label store. Each example is the quarry.sft/1 chat (labels/sft.ts) with a loss flag
// per message: the model's own (assistant) turns are trained, the prompt and every observation masked.
// - A labeled trajectory follows its label: correct → as generated; a corrected SQL → its answer rewritten; any
//   other label → left out. Labels always win over the checks below.
// - An unlabeled one needs an answered episode; with --correct-only its final SQL must also return the gold's result
//   (the evaluator's comparison, on the trajectory's database).
// Repeated conversations are kept once; --prefer-hard puts the hardest questions (Spider hardness) first and --limit
// keeps the first N. Writes sft.jsonl, sft.parquet (the same rows) and data.json.
import { existsSync } from 'node:fs';
import { DATASET_NAMES, evalModeOf, type DatasetName } from '../../core/datasets';
import { createSqlPool } from '../../core/db';
import { evalMode } from '../../core/eval/modes';
import { LabelStore, LabelStoreError } from '../../core/labels/store';
import { asGeneratedExample, toSftExample } from '../../core/labels/sft';
import type { Label } from '../../core/labels/types';
import { createScoringResources } from '../../core/rewards/resources';
import { computeVerdict } from '../../core/rewards/verdict';
import {
  dropRepeatedConversations,
  hardestFirst,
  roleLossMismatches,
  SFT_COLUMNS,
  type SftCandidate,
} from '../../core/training/sftSelection';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import { databaseResolver, openTrajectoryFile, TrajectoryFileError } from '../trajectoryFiles';
import { DataInputError } from './errors';
import {
  countBy,
  DATA_SCHEMA,
  prepareOutDir,
  sourceFile,
  writeDataJson,
  writeRecords,
  type OutputFile,
  type SourceFile,
} from './outputs';

export const SFT_FILES = { parquet: 'sft.parquet', jsonl: 'sft.jsonl' } as const;

interface SftDataOptions {
  /** Trajectory files (absolute paths). */
  trajectories: string[];
  /** A label store (absolute path). */
  labels?: string;
  correctOnly?: boolean;
  preferHard?: boolean;
  limit?: number;
  outDir: string;
  command?: string[];
  onProgress?: (done: number, total: number) => void;
}

interface DroppedTrajectory {
  id: string;
  file: string;
  reason: 'duplicate-id' | 'label' | 'no-answer' | 'no-gold' | 'wrong-answer' | 'repeated-conversation' | 'over-limit';
  detail: string;
}

interface SftDataResult {
  examples: number;
  trajectories: number;
  dropped: DroppedTrajectory[];
  outputs: OutputFile[];
  dataJson: string;
  warnings: string[];
  doc: Record<string, unknown>;
}

interface Candidate extends SftCandidate {
  file: string;
  /** How the trajectory was judged usable. */
  judged: 'label' | 'execution' | 'answered';
}

interface Loaded {
  file: string;
  records: TrajectoryRecord[];
  invalid: { line: number | null; message: string }[];
  truncated: string | null;
}

async function loadTrajectories(files: string[]): Promise<Loaded[]> {
  const out: Loaded[] = [];
  for (const file of files) {
    try {
      const o = await openTrajectoryFile(file, { onInvalid: 'collect' });
      out.push({ file, records: o.records, invalid: o.invalid, truncated: o.truncated });
    } catch (err) {
      if (err instanceof TrajectoryFileError) throw new DataInputError(err.message);
      throw err;
    }
  }
  return out;
}

function readLabels(path: string): Label[] {
  let store: LabelStore;
  try {
    store = LabelStore.openReadOnly(path);
  } catch (err) {
    if (err instanceof LabelStoreError) throw new DataInputError(`--labels: ${err.message}`);
    throw err;
  }
  try {
    return store.all();
  } finally {
    store.close();
  }
}

function modeOf(r: TrajectoryRecord) {
  const d = r.meta.dataset;
  return evalMode(
    typeof d === 'string' && (DATASET_NAMES as readonly string[]).includes(d) ? evalModeOf(d as DatasetName) : 'spider',
  );
}

export async function makeSftData(opts: SftDataOptions): Promise<SftDataResult> {
  const t0 = performance.now();
  if (opts.trajectories.length === 0) throw new DataInputError('no trajectory file given');
  if (opts.limit !== undefined && (!Number.isInteger(opts.limit) || opts.limit < 1))
    throw new DataInputError(`--limit must be a positive integer, got ${opts.limit}`);
  const loaded = await loadTrajectories(opts.trajectories);
  const labels = opts.labels ? readLabels(opts.labels) : [];
  const byId = new Map(labels.map((l) => [l.trajectoryId, l]));
  prepareOutDir(
    opts.outDir,
    'sft',
    [SFT_FILES.parquet, SFT_FILES.jsonl],
    [...opts.trajectories, ...(opts.labels ? [opts.labels] : [])],
  );
  const warnings: string[] = [];
  for (const l of loaded) {
    if (l.invalid.length)
      warnings.push(
        `${l.file}: ${l.invalid.length} line(s) are not valid trajectory records and were skipped ` +
          `(first: ${l.invalid[0].message})`,
      );
    if (l.truncated) warnings.push(`${l.file}: ${l.truncated}; it is ignored`);
  }

  const dropped: DroppedTrajectory[] = [];
  const candidates: Candidate[] = [];
  const seen = new Map<string, string>();
  const pool = opts.correctOnly ? createSqlPool({ size: 2, spares: 0 }) : null;
  const resources = pool ? createScoringResources({ run: pool }) : null;
  const total = loaded.reduce((n, l) => n + l.records.length, 0);
  let done = 0;
  try {
    for (const l of loaded) {
      const dbPathOf = databaseResolver(l.file);
      for (const r of l.records) {
        opts.onProgress?.(done++, total);
        const drop = (reason: DroppedTrajectory['reason'], detail: string) =>
          dropped.push({ id: r.id, file: l.file, reason, detail });
        const earlier = seen.get(r.id);
        if (earlier !== undefined) {
          drop('duplicate-id', `the same trajectory id was read first from ${earlier}`);
          continue;
        }
        seen.set(r.id, l.file);
        const hardness = r.task.difficulty;
        const label = byId.get(r.id);
        if (label) {
          const o = toSftExample(r, label);
          if (o.ok) candidates.push({ example: o.example, hardness, file: l.file, judged: 'label' });
          else drop('label', o.reason);
          continue;
        }
        const o = asGeneratedExample(r);
        if (!o.ok) {
          drop('no-answer', o.reason);
          continue;
        }
        if (!resources) {
          candidates.push({ example: o.example, hardness, file: l.file, judged: 'answered' });
          continue;
        }
        const gold = r.task.gold;
        if (gold === null || gold.trim() === '') {
          drop('no-gold', 'no label and no gold SQL to check the answer against');
          continue;
        }
        const dbPath = dbPathOf(r);
        if (!existsSync(dbPath)) {
          drop('no-gold', `the database ${dbPath} is not there to check the answer on`);
          continue;
        }
        const v = await computeVerdict(r.finalSql, gold, dbPath, modeOf(r), resources);
        if (v.correct) candidates.push({ example: o.example, hardness, file: l.file, judged: 'execution' });
        else
          drop(
            'wrong-answer',
            `the final SQL does not return the gold result (${v.reason}${v.detail ? `: ${v.detail}` : ''})`,
          );
      }
    }
    opts.onProgress?.(total, total);
  } finally {
    await pool?.close();
  }

  const unique = dropRepeatedConversations(candidates);
  const fileOf = new Map(candidates.map((c) => [c.example.id, c.file]));
  for (const d of unique.dropped)
    dropped.push({ id: d.id, file: fileOf.get(d.id) ?? '', reason: 'repeated-conversation', detail: d.reason });
  let chosen = opts.preferHard ? hardestFirst(unique.kept) : unique.kept;
  if (opts.limit !== undefined && chosen.length > opts.limit) {
    for (const c of chosen.slice(opts.limit))
      dropped.push({ id: c.example.id, file: c.file, reason: 'over-limit', detail: `past --limit ${opts.limit}` });
    chosen = chosen.slice(0, opts.limit);
  }

  const rows = chosen.map((c) => c.example);
  const outputs = await writeRecords(opts.outDir, 'sft', SFT_COLUMNS, rows as unknown as Record<string, unknown>[], {
    'quarry.kind': 'sft',
    'quarry.schema': DATA_SCHEMA,
  });
  if (rows.length === 0)
    warnings.push('no trajectory was kept: the SFT files are empty (see data.json for why each was left out)');
  const mismatches = rows.reduce((n, e) => n + roleLossMismatches(e), 0);
  if (mismatches > 0) {
    warnings.push(
      `${mismatches} message(s) are in the assistant role with loss false (MTIR-SQL's rethink line): ` +
        'trainers that mask by role (verl, TRL) will train on them',
    );
  }
  const sources: SourceFile[] = [];
  for (const l of loaded)
    sources.push({
      ...(await sourceFile('trajectories', l.file)),
      records: l.records.length,
      invalidLines: l.invalid.length,
    });
  if (opts.labels) sources.push({ ...(await sourceFile('labels', opts.labels)), labels: labels.length });
  const doc = {
    schema: DATA_SCHEMA as typeof DATA_SCHEMA,
    kind: 'sft' as const,
    createdAt: new Date().toISOString(),
    command: opts.command ?? null,
    sources,
    filters: {
      correctOnly: opts.correctOnly === true,
      preferHard: opts.preferHard === true,
      limit: opts.limit ?? null,
      labels: opts.labels ?? null,
    },
    counts: {
      trajectories: total,
      written: rows.length,
      bySource: countBy(rows, (e) => e.source),
      judgedBy: countBy(chosen, (c) => c.judged),
      byHardness: countBy(chosen, (c) => c.hardness ?? 'unknown'),
      byProtocol: countBy(rows, (e) => e.protocol),
      dropped: countBy(dropped, (d) => d.reason),
      messages: rows.reduce((n, e) => n + e.messages.length, 0),
      trainedMessages: rows.reduce((n, e) => n + e.messages.filter((m) => m.loss).length, 0),
      roleLossMismatches: mismatches,
    },
    outputs,
    dropped,
    timings: { totalMs: Math.round(performance.now() - t0) },
  };
  const dataJson = await writeDataJson(opts.outDir, doc);
  return { examples: rows.length, trajectories: total, dropped, outputs, dataJson, warnings, doc };
}
