// sha256 of a database file, so a replay can tell whether the database changed since the trajectory was recorded.
// Hashing a large BIRD database takes a while, so the digest is cached until the file's size or mtime changes.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

const cache = new Map<string, { stamp: string; digest: Promise<string> }>();
const CAPACITY = 1024;

/** Hex sha256 of the file's bytes; concurrent calls for one unchanged file share one read. */
export async function dbSha256(path: string): Promise<string> {
  const st = await stat(path);
  const stamp = `${st.mtimeMs}:${st.size}`;
  const hit = cache.get(path);
  if (hit && hit.stamp === stamp) return hit.digest;
  const digest = hashFile(path);
  cache.delete(path);
  cache.set(path, { stamp, digest });
  while (cache.size > CAPACITY) cache.delete(cache.keys().next().value as string);
  // A failed read must not stay cached as a rejected promise.
  digest.catch(() => {
    if (cache.get(path)?.digest === digest) cache.delete(path);
  });
  return digest;
}

/** Hex sha256 of any file (a dataset file, a report): the same cached digest. */
export const fileSha256: (path: string) => Promise<string> = dbSha256;

function hashFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => h.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
