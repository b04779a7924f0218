// Where a command may write. An output never replaces one of the command's inputs (the same file by device and
// inode, so links and relative paths are seen through), never replaces a SQLite database, and replaces an existing
// file only when it is Quarry's own output of the same kind — otherwise it is refused unless the user says --force.
import { closeSync, openSync, readSync, statSync, type Stats } from 'node:fs';

export class OutputRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutputRefused';
  }
}

interface OutputCheck {
  /** Files the command reads: the output may be none of them. */
  inputs: (string | null | undefined)[];
  /** What the output is, for messages ("SFT examples"). */
  kind: string;
  /** Whether an existing file's first line shows it is an earlier output of this kind (it may then be replaced). */
  sameKind: (firstLine: string) => boolean;
  /** Replace an existing file that is not of this kind (never an input, never a database). */
  force?: boolean;
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** The first `max` bytes of a file, as text. */
function head(path: string, max = 64 * 1024): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(max);
    return buf.subarray(0, readSync(fd, buf, 0, max, 0));
  } finally {
    closeSync(fd);
  }
}

/** Throws OutputRefused, naming why, when `out` must not be written. */
export function checkOutputPath(out: string, check: OutputCheck): void {
  const target = statOrNull(out);
  if (!target) return;
  if (target.isDirectory()) throw new OutputRefused(`${out} is a directory: name a file for the ${check.kind}`);
  for (const input of check.inputs) {
    if (!input) continue;
    const s = statOrNull(input);
    if (s && s.dev === target.dev && s.ino === target.ino) {
      throw new OutputRefused(
        `the output ${out} is also an input (${input}); writing it would destroy what is being read`,
      );
    }
  }
  const start = head(out);
  if (start.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') {
    throw new OutputRefused(`${out} is a SQLite database; Quarry never writes over one (choose another --out)`);
  }
  if (target.size === 0) return;
  const firstLine = start
    .toString('utf8')
    .replace(/^\ufeff/, '')
    .split('\n')[0];
  if (check.sameKind(firstLine) || check.force) return;
  throw new OutputRefused(`${out} exists and is not ${check.kind} Quarry wrote; pass --force to replace it`);
}
