// Whether a path lies strictly inside a folder, judged on the names alone (both absolute): the confinement test the
// environment service's --db-dir roots and the reward terms' test-suite folders share.
import { isAbsolute, relative, sep } from 'node:path';

export function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
