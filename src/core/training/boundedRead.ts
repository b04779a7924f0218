// Reading a small file of a job, checkpoint or workspace folder that someone else may have written (a cloned
// repository's .quarry/, a job folder synced from a host): only a regular file is read, never a named pipe, socket or
// device (a FIFO would block the read forever), and never more than a cap. The file is opened without blocking and
// checked on the open descriptor, so it cannot be swapped for a pipe between the check and the read.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

export class FileReadError extends Error {
  constructor(
    message: string,
    readonly code: 'ENOENT' | 'NOTFILE' | 'TOOBIG' | 'IO',
  ) {
    super(message);
    this.name = 'FileReadError';
  }
}

/** The text of `path` when it is a regular file of at most `maxBytes`; a FileReadError saying why not otherwise. */
export function readRegularFileSync(path: string, maxBytes: number): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new FileReadError(`cannot read ${path}: ${(err as Error).message}`, code === 'ENOENT' ? 'ENOENT' : 'IO');
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new FileReadError(`${path} is not a regular file (a pipe, socket or device?)`, 'NOTFILE');
    if (st.size > maxBytes) throw new FileReadError(`${path} is larger than ${maxBytes} bytes`, 'TOOBIG');
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
      if (got > maxBytes) throw new FileReadError(`${path} is larger than ${maxBytes} bytes`, 'TOOBIG');
      if (got === buf.length) break;
    }
    return buf.subarray(0, got).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Like readRegularFileSync, but null for a file that is absent, not regular, too large or unreadable. */
export function readRegularFileOrNull(path: string, maxBytes: number): string | null {
  try {
    return readRegularFileSync(path, maxBytes);
  } catch (err) {
    if (err instanceof FileReadError) return null;
    throw err;
  }
}
