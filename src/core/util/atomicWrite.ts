// Writing an output file whole or not at all: the bytes go to a temporary file beside the target, which is then
// renamed into place, so a failed or killed writer never leaves half a training file behind. A file too large to hold
// in memory is streamed the same way (openAtomicFile): written piece by piece, with backpressure, then renamed.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

function tempPath(out: string): string {
  return join(dirname(out), `.${basename(out)}.${process.pid}.${Date.now()}.tmp`);
}

export async function writeFileAtomic(out: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(out), { recursive: true });
  const tmp = tempPath(out);
  try {
    await writeFile(tmp, data);
    await rename(tmp, out);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** One JSON object per line. */
export function jsonlText(rows: readonly unknown[]): string {
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
