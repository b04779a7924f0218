// Writing a file whole or not at all: the bytes go to a temporary file beside the target, are flushed to disk (fsync),
// and the temporary file is then renamed over the target, so a failed or killed writer never leaves half a file
// behind: readers see the old content or the new, and at worst a stray temporary file stays beside it. Text and JSON,
// sync and async; a file too large to hold in memory is streamed the same way (openAtomicFile).
import { createHash } from 'node:crypto';
import { closeSync, createWriteStream, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let made = 0;

/** A fresh hidden name beside `out` (unique per process and call, so concurrent writers never share one). */
function tempPath(out: string): string {
  return join(dirname(out), `.${basename(out)}.${process.pid}.${Date.now()}.${made++}.tmp`);
}

/** JSON text with a final newline (`space` as JSON.stringify's). */
function jsonText(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space) + '\n';
}

export async function writeFileAtomic(out: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(out), { recursive: true });
  const tmp = tempPath(out);
  try {
    const fh = await open(tmp, 'wx');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, out);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export async function writeJsonAtomic(out: string, value: unknown, space?: number): Promise<void> {
  await writeFileAtomic(out, jsonText(value, space));
}

/** writeFileAtomic for callers that cannot wait (a lock held, a synchronous store). */
export function writeFileAtomicSync(out: string, data: string | Uint8Array): void {
  mkdirSync(dirname(out), { recursive: true });
  const tmp = tempPath(out);
  try {
    const fd = openSync(tmp, 'wx');
    try {
      const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let at = 0; at < buf.byteLength; ) at += writeSync(fd, buf, at, buf.byteLength - at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, out);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

export function writeJsonAtomicSync(out: string, value: unknown, space?: number): void {
  writeFileAtomicSync(out, jsonText(value, space));
}

/** One JSON object per line. */
function jsonlText(rows: readonly unknown[]): string {
  return rows.map((r) => JSON.stringify(r) + '\n').join('');
}

export async function writeJsonl(out: string, rows: readonly unknown[]): Promise<void> {
  await writeFileAtomic(out, jsonlText(rows));
}

/** A file being streamed into place: `out` appears (renamed from a temporary file beside it) only on commit(). */
export interface AtomicFile {
  /** Appends; resolves at once unless the stream's buffer is full, then when it has drained. */
  write(chunk: string | Uint8Array): Promise<void>;
  /** Ends the file and renames it into place; its size and sha256. */
  commit(): Promise<{ bytes: number; sha256: string }>;
  /** Removes the temporary file (after a failure); `out` is left as it was. */
  abort(): Promise<void>;
}

/**
 * Opens `out` for streaming. A Uint8Array given to write() must not change afterwards (the stream may still hold it);
 * strings are encoded at once.
 */
export async function openAtomicFile(out: string): Promise<AtomicFile> {
  await mkdir(dirname(out), { recursive: true });
  const tmp = tempPath(out);
  const stream = createWriteStream(tmp, { flags: 'wx', highWaterMark: 1 << 20 });
  let failed: Error | null = null;
  stream.on('error', (err) => {
    failed = err;
  });
  const hash = createHash('sha256');
  let bytes = 0;
  return {
    async write(chunk) {
      if (failed) throw failed;
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      hash.update(buf);
      bytes += buf.byteLength;
      if (!stream.write(buf)) await once(stream, 'drain');
    },
    async commit() {
      stream.end();
      await finished(stream);
      if (failed) throw failed;
      const fh = await open(tmp, 'r+');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, out);
      return { bytes, sha256: hash.digest('hex') };
    },
    async abort() {
      stream.destroy();
      await finished(stream).catch(() => {});
      await rm(tmp, { force: true });
    },
  };
}
