// Writing an output file whole or not at all: the bytes go to a temporary file beside the target, which is then
// renamed into place, so a failed or killed writer never leaves half a training file behind.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export async function writeFileAtomic(out: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(out), { recursive: true });
  const tmp = join(dirname(out), `.${basename(out)}.${process.pid}.${Date.now()}.tmp`);
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
