// Opening a trajectory file, the one way replay, diagnostics, labeling and `quarry score` do it: the file is checked
// (missing, a directory), read with the validating reader (bad lines listed, not fatal, unless asked to be strict),
// and each record's database is found by one rule: an absolute task.db.path as written, a relative one against the
// trajectory file's folder (a file moved with its databases still works), or, with a Spider-layout directory,
// DIR/<db_id>/<db_id>.sqlite.
import { statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { readTrajectories, type ReadResult } from '../core/trajectories/reader';
import type { TrajectoryRecord } from '../core/trajectories/types';

interface OpenedTrajectories {
  file: string;
  /** Path, size and modification time: a rewritten file is a different version. */
  version: string;
  records: TrajectoryRecord[];
  /** The 1-based line of each record. */
  lines: number[];
  /** The first record of each id. */
  byId: Map<string, TrajectoryRecord>;
  /** Lines that are not valid records. */
  invalid: Array<{ line: number | null; message: string }>;
  /** An unfinished last line, in words, or null. */
  truncated: string | null;
}

interface OpenOptions {
  /** `throw` stops at the first bad line (the CLI); `collect` (default) lists them all (the editor). */
  onInvalid?: 'throw' | 'collect';
}

/** A trajectory file that cannot be opened at all (missing, a directory, unreadable), said for a person. */
export class TrajectoryFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrajectoryFileError';
  }
}

export async function openTrajectoryFile(file: string, opts: OpenOptions = {}): Promise<OpenedTrajectories> {
  let version: string;
  try {
    const st = statSync(file);
    if (st.isDirectory())
      throw new TrajectoryFileError(`${file} is a directory, not a trajectory file (JSONL): name a file inside it`);
    version = `${file}\0${st.size}\0${st.mtimeMs}`;
  } catch (err) {
    if (err instanceof TrajectoryFileError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new TrajectoryFileError(
      code === 'ENOENT' ? `no such trajectory file: ${file}` : `cannot read ${file}: ${(err as Error).message}`,
    );
  }
  const read: ReadResult = await readTrajectories(file, { onInvalid: opts.onInvalid ?? 'collect' });
  const byId = new Map<string, TrajectoryRecord>();
  for (const r of read.records) if (!byId.has(r.id)) byId.set(r.id, r);
  return {
    file,
    version,
    records: read.records,
    lines: read.lines,
    byId,
    invalid: read.invalid.map((e) => ({ line: e.line, message: e.message })),
    truncated: read.truncated
      ? `line ${read.truncated.line} is unfinished (${read.truncated.chars} characters): a writer was ` +
        `stopped mid-record`
      : null,
  };
}

/**
 * Where each record's database is. Without `dbDir`: task.db.path, a relative one resolved against the folder of
 * `file`. With `dbDir` (Spider layout): DIR/<db_id>/<db_id>.sqlite, or DIR/<file name> for a record without an id.
 */
export function databaseResolver(file: string, opts: { dbDir?: string } = {}): (r: TrajectoryRecord) => string {
  const { dbDir } = opts;
  if (dbDir !== undefined) {
    return (r) => {
      const id = r.task.db.id;
      return id ? join(dbDir, id, `${id}.sqlite`) : join(dbDir, basename(r.task.db.path));
    };
  }
  const folder = dirname(resolve(file));
  return (r) => (isAbsolute(r.task.db.path) ? r.task.db.path : resolve(folder, r.task.db.path));
}
