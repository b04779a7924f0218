// An evaluation mode scored over a test suite: every *.sqlite file in TSDIR/<db_id>/ (as spider mode reads them),
// with the mode's own rewriting and comparison, so `quarry bench --test-suite` works for BIRD rules too.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { EvalMode } from '../modes';

export function suiteDatabases(tsDir: string, dbId: string): string[] {
  const dir = join(tsDir, dbId);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.includes('.sqlite'))
    .sort()
    .map((n) => join(dir, n));
}

export function testSuiteMode(mode: EvalMode): EvalMode {
  return { ...mode, databases: suiteDatabases };
}
