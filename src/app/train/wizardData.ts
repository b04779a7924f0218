// The wizard's data step making the data where it asks for it, through the functions behind `quarry data` (no shell):
// `quarry data sft` over the workspace's saved trajectories and its label store, `quarry data rl` over a Spider-style
// dataset file, or SFT conversations from a dataset's gold SQL (each question's prompt from `quarry data rl`, then the
// gold answer in the protocol's answer block: what a base model is taught to answer). Everything it makes goes to
// .quarry/data/<kind>-<name>-<time>/, where the next run's data step finds it again.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ProtocolName } from '../../core/agent/types';
import { databasePath } from '../../core/datasets/databases';
import { answerBlock } from '../../core/labels/answerFormat';
import { SFT_SCHEMA, type SftExample } from '../../core/labels/sft';
import type { RlRecord } from '../../core/training/rlRecord';
import { SFT_COLUMNS } from '../../core/training/sftSelection';
import { quarryPath } from '../../core/workspace/quarryLayout';
import { DATA_SCHEMA, prepareOutDir, writeDataJson, writeRecords } from '../data/outputs';
import { makeRlData, RL_FILES } from '../data/rl';
import { makeSftData, SFT_FILES } from '../data/sft';
import { shortName } from './wizardChoices';

/** A Spider-style dataset file found in the workspace, with the folder its databases are in. */
export interface DatasetFile {
  file: string;
  dbDir: string;
  questions: number;
  label: string;
}

const DATASET_BYTES = 20 * 1024 * 1024;

/** The questions of a Spider-style file (a JSON list of {db_id, question, query|SQL}), or null when it is not one. */
function spiderQuestions(file: string): Array<{ db_id: string }> | null {
  try {
    if (statSync(file).size > DATASET_BYTES) return null;
    const doc = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!Array.isArray(doc) || doc.length === 0) return null;
    const ok = doc.every(
      (q) =>
        q &&
        typeof q === 'object' &&
        typeof q.db_id === 'string' &&
        typeof q.question === 'string' &&
        (typeof q.query === 'string' || typeof q.SQL === 'string'),
    );
    return ok ? (doc as Array<{ db_id: string }>) : null;
  } catch {
    return null;
  }
}

/**
 * The databases folder of a dataset file: Spider's `database/` beside it, else the file's own folder — the first
 * where every db_id has its `<db_id>/<db_id>.sqlite`; null when neither has them all.
 */
export function datasetDbDir(file: string, dbIds: Iterable<string>): string | null {
  const ids = [...new Set(dbIds)];
  for (const dir of [join(dirname(file), 'database'), dirname(file)])
    if (ids.every((id) => existsSync(databasePath(dir, id)))) return dir;
  return null;
}

/** Spider-style dataset files `depth` levels under `root` whose databases are there (dot folders and deps skipped). */
export function findDatasetFiles(root: string, depth = 3): DatasetFile[] {
  const out: DatasetFile[] = [];
  const visit = (dir: string, left: number) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const n of names) {
      if (n.startsWith('.') || n === 'node_modules' || n === '__pycache__') continue;
      const p = join(dir, n);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (left > 0) visit(p, left - 1);
        continue;
      }
      if (!n.endsWith('.json')) continue;
      const qs = spiderQuestions(p);
      const dbDir = qs
        ? datasetDbDir(
            p,
            qs.map((q) => q.db_id),
          )
        : null;
      if (qs && dbDir) {
        const rel = p.slice(root.length + 1);
        out.push({ file: p, dbDir, questions: qs.length, label: `${rel} (${qs.length} questions)` });
      }
    }
  };
  visit(root, depth);
  return out;
}

/** The workspace's saved trajectory files (.quarry/trajectories/*.jsonl: Ask, replays) and its label store. */
export function labeledTrajectories(workspace: string): { files: string[]; labels: string | null } {
  const dir = quarryPath(workspace, 'trajectories');
  let files: string[] = [];
  try {
    files = readdirSync(dir)
      .filter((n) => n.endsWith('.jsonl'))
      .sort()
      .map((n) => join(dir, n));
  } catch {
    /* none saved yet */
  }
  const labels = quarryPath(workspace, 'labels');
  return { files, labels: existsSync(labels) ? labels : null };
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
}

/** A new folder for made data: .quarry/data/<kind>-<name>-<time>. */
export function newDataDir(workspace: string, kind: 'rl' | 'sft', from: string, now = new Date()): string {
  const name = shortName(from).replace(/[^\w.-]+/g, '-');
  return quarryPath(workspace, 'data', `${kind}-${name}-${stamp(now)}`);
}

/** What was made: the folder (a `quarry data` folder with its data.json), its kind and how many rows it holds. */
export interface MadeData {
  dir: string;
  kind: 'rl' | 'sft';
  rows: number;
  warnings: string[];
}

/** `quarry data sft` over the trajectories (labels win: a corrected answer is trained on as corrected). */
export async function sftFromTrajectories(o: {
  files: string[];
  labels: string | null;
  outDir: string;
}): Promise<MadeData> {
  const r = await makeSftData({
    trajectories: o.files,
    ...(o.labels ? { labels: o.labels } : {}),
    outDir: o.outDir,
    command: ['quarry', 'data', 'sft', '(Train a Model…)'],
  });
  return { dir: o.outDir, kind: 'sft' as const, rows: r.examples, warnings: r.warnings };
}

/** `quarry data rl` over a Spider-style dataset file. */
export async function rlFromDataset(o: {
  file: string;
  dbDir: string;
  protocol: ProtocolName;
  outDir: string;
}): Promise<MadeData> {
  const r = await makeRlData({
    dataset: 'spider',
    file: o.file,
    dbDir: o.dbDir,
    protocol: o.protocol,
    outDir: o.outDir,
    command: ['quarry', 'data', 'rl', '(Train a Model…)'],
  });
  return { dir: o.outDir, kind: 'rl' as const, rows: r.records, warnings: r.warnings };
}

/** One RL row as an SFT conversation: its prompt (not trained on), then the gold SQL as the protocol answers. */
export function goldConversation(row: RlRecord, protocol: ProtocolName): SftExample {
  const x = row.extra_info;
  return {
    schema: SFT_SCHEMA,
    id: `gold:${x.db_id}:${x.index}`,
    protocol,
    question: x.question,
    db: { path: x.db_path, id: x.db_id },
    source: 'corrected',
    verdict: null,
    tags: ['gold'],
    messages: [
      ...row.prompt.map((m) => ({ role: m.role, content: m.content, loss: false })),
      { role: 'assistant', content: answerBlock(protocol, row.reward_model.ground_truth), loss: true },
    ],
  };
}

/**
 * SFT conversations from a dataset's gold SQL: `quarry data rl` makes each question's prompt (in `<out>/rl/`), and
 * each becomes the prompt followed by the gold answer (goldConversation), written as `quarry data sft` writes.
 */
export async function sftFromDatasetGold(o: {
  file: string;
  dbDir: string;
  protocol: ProtocolName;
  outDir: string;
}): Promise<MadeData> {
  const rlDir = join(o.outDir, 'rl');
  prepareOutDir(o.outDir, 'sft', [SFT_FILES.parquet, SFT_FILES.jsonl], [o.file]);
  const rl = await rlFromDataset({ ...o, outDir: rlDir });
  const rows = readFileSync(join(rlDir, RL_FILES.jsonl), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => goldConversation(JSON.parse(l) as RlRecord, o.protocol));
  const outputs = await writeRecords(o.outDir, 'sft', SFT_COLUMNS, rows as unknown as Record<string, unknown>[], {
    'quarry.kind': 'sft',
    'quarry.schema': DATA_SCHEMA,
  });
  await writeDataJson(o.outDir, {
    schema: DATA_SCHEMA,
    kind: 'sft',
    createdAt: new Date().toISOString(),
    command: ['quarry', 'data', 'rl', '(Train a Model…: gold answers)'],
    sources: [{ role: 'dataset', path: o.file, dbDir: o.dbDir, rl: rlDir }],
    filters: { gold: true, protocol: o.protocol },
    counts: { questions: rl.rows, written: rows.length },
    outputs,
  });
  return { dir: o.outDir, kind: 'sft' as const, rows: rows.length, warnings: rl.warnings };
}

/** A short label for a made folder in messages. */
export function madeLabel(m: MadeData): string {
  return `${basename(m.dir)} (${m.kind}, ${m.rows} rows)`;
}
