// The files `quarry data` writes into its --out directory: the records as Parquet and as JSONL (the same rows, streamed
// record by record), and data.json describing the run. An output never replaces one of the run's inputs, and files
// already in the directory are replaced only when its data.json shows an earlier run of the same kind wrote them.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Column } from '../../core/training/columns';
import { fileSha256 } from '../../core/trajectories/dbHash';
import { openAtomicFile, writeJsonAtomic, type AtomicFile } from '../../core/util/atomicWrite';
import { checkOutputPath, OutputRefused } from '../../core/util/outputPath';
import { DataInputError } from './errors';
import { ParquetRowWriter, type RowGroupLimits } from './parquet';

export const DATA_SCHEMA = 'quarry.data/1';
const DATA_JSON = 'data.json';
type DataKind = 'rl' | 'sft';

export interface SourceFile {
  /** What the file is to the run (`dataset`, `tables`, `difficulty-report`, `trajectories`, `labels`). */
  role: string;
  path: string;
  bytes: number;
  sha256: string;
  /** Trajectory files: the records read and the lines that were not valid records. */
  records?: number;
  invalidLines?: number;
  /** A label store: the labels in it. */
  labels?: number;
}

export async function sourceFile(role: string, path: string): Promise<SourceFile> {
  return { role, path, bytes: statSync(path).size, sha256: await fileSha256(path) };
}

export interface OutputFile {
  file: string;
  rows: number;
  bytes: number;
  sha256: string;
}

function writtenByUs(outDir: string, kind: DataKind): boolean {
  try {
    const doc = JSON.parse(readFileSync(join(outDir, DATA_JSON), 'utf8')) as { schema?: unknown; kind?: unknown };
    return doc.schema === DATA_SCHEMA && doc.kind === kind;
  } catch {
    return false;
  }
}

/**
 * Makes `outDir` (when missing) and checks that `files` (names inside it) may be written: refuses a path that is a
 * file, an output that is also one of `inputs`, a SQLite database, or existing files an earlier `quarry data <kind>`
 * did not write.
 */
export function prepareOutDir(
  outDir: string,
  kind: DataKind,
  files: readonly string[],
  inputs: readonly string[],
): void {
  let st;
  try {
    st = statSync(outDir);
  } catch {
    st = null;
  }
  if (st && !st.isDirectory())
    throw new DataInputError(`--out ${outDir} is a file: name a directory (it is created when missing)`);
  const ours = st ? writtenByUs(outDir, kind) : false;
  for (const name of [...files, DATA_JSON]) {
    try {
      checkOutputPath(join(outDir, name), {
        inputs: [...inputs],
        kind: `data from \`quarry data ${kind}\``,
        sameKind: () => ours,
      });
    } catch (err) {
      if (err instanceof OutputRefused)
        throw new DataInputError(
          `${err.message.replace(/; pass --force to replace it$/, '')}; choose another --out directory`,
        );
      throw err;
    }
  }
  try {
    mkdirSync(outDir, { recursive: true });
  } catch (err) {
    throw new DataInputError(`cannot create --out ${outDir}: ${(err as Error).message}`);
  }
}

/**
 * `<base>.parquet` and `<base>.jsonl` holding the same rows, streamed: each row goes to the JSONL file as it is added
 * and into the Parquet file's current row group (written out when full), so memory is bounded by a row group, never
 * by the dataset. Both files appear only when finish() succeeds; abort() leaves neither behind.
 */
export class RecordsWriter {
  private rows = 0;

  private constructor(
    private readonly base: string,
    private readonly jsonl: AtomicFile,
    private readonly parquet: ParquetRowWriter,
  ) {}

  static async open(
    outDir: string,
    base: string,
    columns: readonly Column[],
    meta: Record<string, string>,
    rowGroup: RowGroupLimits = {},
  ): Promise<RecordsWriter> {
    const parquet = await ParquetRowWriter.open(join(outDir, `${base}.parquet`), columns, meta, rowGroup);
    try {
      return new RecordsWriter(base, await openAtomicFile(join(outDir, `${base}.jsonl`)), parquet);
    } catch (err) {
      await parquet.abort();
      throw err;
    }
  }

  /** Throws ColumnError when the row does not fit the columns (then abort()). */
  async add(row: Record<string, unknown>): Promise<void> {
    const line = JSON.stringify(row) + '\n';
    await this.parquet.add(row, line.length);
    await this.jsonl.write(line);
    this.rows++;
  }

  async finish(): Promise<OutputFile[]> {
    const p = await this.parquet.finish();
    const j = await this.jsonl.commit();
    return [
      { file: `${this.base}.parquet`, rows: p.rows, bytes: p.bytes, sha256: p.sha256 },
      { file: `${this.base}.jsonl`, rows: this.rows, bytes: j.bytes, sha256: j.sha256 },
    ];
  }

  async abort(): Promise<void> {
    await Promise.all([this.parquet.abort(), this.jsonl.abort()]);
  }
}

/** `<base>.parquet` and `<base>.jsonl` holding the same rows (a list already in memory). */
export async function writeRecords(
  outDir: string,
  base: string,
  columns: readonly Column[],
  rows: readonly Record<string, unknown>[],
  meta: Record<string, string>,
): Promise<OutputFile[]> {
  const w = await RecordsWriter.open(outDir, base, columns, meta);
  try {
    for (const r of rows) await w.add(r);
    return await w.finish();
  } catch (err) {
    await w.abort();
    throw err;
  }
}

export async function writeDataJson(
  outDir: string,
  doc: { schema: typeof DATA_SCHEMA; kind: DataKind } & Record<string, unknown>,
): Promise<string> {
  const path = join(outDir, DATA_JSON);
  await writeJsonAtomic(path, doc, 1);
  return path;
}

/** How many items give each value of `key`, in first-seen order. */
export function countBy<T>(items: readonly T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const it of items) {
    const k = key(it);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
