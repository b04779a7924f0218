// `quarry testsuite build`: the test suite of every database a dataset's questions use, built `jobs` databases at a
// time over one SQL pool, resumable (a database whose folder has a complete manifest is skipped when it was built
// with the same settings for the same gold queries), then TSDIR/report.json: per database and in total, how many
// gold/neighbour pairs the original database alone cannot tell apart and how many the suite does.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSqlPool } from '../../db/pool';
import { type BuildSettings, type DatabaseManifest, buildDatabase, completeManifest, goldsHash } from './buildDatabase';

export interface SuiteDatabase {
  dbId: string;
  /** The original database file. */
  source: string;
  golds: string[];
}

interface SuiteReport {
  schema: 'quarry.testsuite-report/1';
  settings: Omit<BuildSettings, 'timeoutMs'>;
  totals: {
    databases: number;
    files: number;
    golds: number;
    neighbours: number;
    toldApartByOriginal: number;
    sameOnOriginal: number;
    coverable: number;
    toldApartBySuite: number;
    /** toldApartBySuite / sameOnOriginal: the single-database false positives the suite turns into misses. */
    suiteRecall: number | null;
    /** Gold queries answering only an empty or zero result on the original, and of those, answering more somewhere
     *  in the suite. */
    trivialOnOriginal: number;
    informativeInSuite: number;
  };
  databases: Pick<DatabaseManifest, 'dbId' | 'files' | 'golds' | 'neighbours' | 'variants' | 'candidates'>[];
  /** Databases that could not be built, with why. */
  failed: { dbId: string; error: string }[];
}

interface BuildSuiteOptions extends BuildSettings {
  outDir: string;
  jobs: number;
  onProgress?: (done: number, total: number, dbId: string) => void;
}

/** Thrown when TSDIR holds a database built with other settings or other gold queries. */
export class SuiteMismatchError extends Error {}

const SAFE_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

interface SuiteBuild {
  report: SuiteReport;
  /** Databases found complete and not built again. */
  resumed: string[];
}

export async function buildSuite(databases: SuiteDatabase[], o: BuildSuiteOptions): Promise<SuiteBuild> {
  const settings: BuildSettings = {
    seed: o.seed,
    variants: o.variants,
    candidates: o.candidates,
    maxNeighbours: o.maxNeighbours,
    timeoutMs: o.timeoutMs,
  };
  const { timeoutMs: _t, ...shown } = settings;
  void _t;
  const dbs = [...databases].sort((a, b) => (a.dbId < b.dbId ? -1 : a.dbId > b.dbId ? 1 : 0));
  for (const d of dbs) {
    if (!SAFE_ID.test(d.dbId)) throw new SuiteMismatchError(`db_id '${d.dbId}' cannot name a folder`);
    const m = completeManifest(o.outDir, d.dbId);
    if (m && (JSON.stringify(m.settings) !== JSON.stringify(shown) || m.goldsHash !== goldsHash(d.golds))) {
      throw new SuiteMismatchError(
        `${join(o.outDir, d.dbId)} was built with other settings or gold queries ` +
          `(${JSON.stringify(m.settings)}); use another --out or remove that folder`,
      );
    }
  }
  mkdirSync(o.outDir, { recursive: true });
  const results: (SuiteReport['databases'][number] | undefined)[] = new Array(dbs.length);
  const failed: SuiteReport['failed'] = [];
  const pool = createSqlPool({ size: o.jobs, pipeline: 16, spares: 0 });
  let done = 0,
    next = 0;
  const resumed: string[] = [];
  const shownEntry = (m: DatabaseManifest) => ({
    dbId: m.dbId,
    files: m.files,
    golds: m.golds,
    neighbours: m.neighbours,
    variants: m.variants,
    candidates: m.candidates,
  });
  const worker = async () => {
    while (next < dbs.length) {
      const i = next++;
      const d = dbs[i];
      const m = completeManifest(o.outDir, d.dbId);
      if (m) {
        results[i] = shownEntry(m);
        resumed.push(d.dbId);
      } else {
        try {
          results[i] = shownEntry(await buildDatabase(d.dbId, d.source, d.golds, o.outDir, settings, pool));
        } catch (err) {
          failed.push({ dbId: d.dbId, error: (err as Error).message });
          rmSync(join(o.outDir, d.dbId), { recursive: true, force: true });
          rmSync(join(o.outDir, `.build-${d.dbId}`), { recursive: true, force: true });
        }
      }
      o.onProgress?.(++done, dbs.length, d.dbId);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.jobs, dbs.length)) }, worker));
  } finally {
    await pool.close();
  }
  const built = results.filter((r) => r !== undefined);
  const sum = (f: (r: (typeof built)[number]) => number) => built.reduce((a, r) => a + f(r), 0);
  const sameOnOriginal = sum((r) => r.neighbours.sameOnOriginal);
  const toldApartBySuite = sum((r) => r.neighbours.toldApartBySuite);
  const report: SuiteReport = {
    schema: 'quarry.testsuite-report/1',
    settings: shown,
    totals: {
      databases: built.length,
      files: sum((r) => r.files.length),
      golds: sum((r) => r.golds.total),
      neighbours: sum((r) => r.neighbours.total),
      toldApartByOriginal: sum((r) => r.neighbours.toldApartByOriginal),
      sameOnOriginal,
      coverable: sum((r) => r.neighbours.coverable),
      toldApartBySuite,
      suiteRecall: sameOnOriginal ? Number((toldApartBySuite / sameOnOriginal).toFixed(4)) : null,
      trivialOnOriginal: sum((r) => r.golds.trivialOnOriginal),
      informativeInSuite: sum((r) => r.golds.informativeInSuite),
    },
    databases: built,
    failed: failed.sort((a, b) => (a.dbId < b.dbId ? -1 : 1)),
  };
  // The report is the same bytes for the same inputs and seed, resumed or not: no times, no paths.
  writeFileSync(join(o.outDir, 'report.json'), JSON.stringify(report, null, 1) + '\n');
  return { report, resumed: resumed.sort() };
}

/** The printed summary of a build. */
export function formatSuiteReport(r: SuiteReport, resumed: string[] = []): string {
  const t = r.totals;
  const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)}%` : '-');
  const lines = [
    `test suite: ${t.databases} databases, ${t.files} files (${t.files - t.databases} variants), ` +
      `${t.golds} gold queries`,
    `neighbours: ${t.neighbours}; told apart by the original alone: ${t.toldApartByOriginal} ` +
      `(${pct(t.toldApartByOriginal, t.neighbours)})`,
    `answer like the gold on the original (single-database false positives): ${t.sameOnOriginal}; ` +
      `told apart by the suite: ${t.toldApartBySuite} (${pct(t.toldApartBySuite, t.sameOnOriginal)}), ` +
      `by some candidate: ${t.coverable}`,
    `gold answers empty or zero on the original: ${t.trivialOnOriginal}; answering more on some variant: ` +
      `${t.informativeInSuite}`,
  ];
  if (resumed.length) lines.push(`resumed: ${resumed.length} databases already complete`);
  for (const f of r.failed) lines.push(`FAILED ${f.dbId}: ${f.error}`);
  return lines.join('\n');
}
