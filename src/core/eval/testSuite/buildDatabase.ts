// Builds the test suite of one database: neighbours of its gold queries, candidate variants fuzzed from the
// original, the candidates distilled to those that tell apart the most gold/neighbour pairs the original cannot,
// then TSDIR/<db_id>/<db_id>.sqlite (a byte copy of the original), <db_id>_ts1.sqlite … and manifest.json, written
// last: a folder with a manifest is complete.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { SqlPool } from '../../db/pool';
import type { ExecVerdict } from '../execution';
import { comparisonBoundaries } from './boundaries';
import { writeBoundaryVariant } from './boundaryVariant';
import { writeVariant } from './fuzzVariant';
import { greedyCover } from './greedyCover';
import { type Pair, judgePairs } from './judgePairs';
import { evalMode } from '../modes';
import { type NeighbourKind, comparedLiterals, neighbourSchema, neighboursOf } from './neighbours';
import { createRng } from '../../util/random';
import { readSourceProfile } from './sourceProfile';

const MANIFEST = 'manifest.json';
/** Bumped when the builder makes other variants from the same settings: a folder of an older builder is rebuilt. */
const MANIFEST_SCHEMA = 'quarry.testsuite/3';

export interface BuildSettings {
  seed: number;
  /** Variants kept at most (fewer when more would tell apart no further pair). */
  variants: number;
  /** Candidate variants fuzzed to choose from (and half as many boundary variants of the original beside them). */
  candidates: number;
  /** Neighbours per gold query at most. */
  maxNeighbours: number;
  /** Per statement, ms. */
  timeoutMs: number;
}

interface KindCount {
  neighbours: number;
  sameOnOriginal: number;
  toldApartBySuite: number;
}

export interface DatabaseManifest {
  schema: typeof MANIFEST_SCHEMA;
  dbId: string;
  settings: Omit<BuildSettings, 'timeoutMs'>;
  /** sha256 of the gold queries (sorted, distinct) the suite was distilled for. */
  goldsHash: string;
  /** The suite's files in the folder, the original's copy first. */
  files: string[];
  golds: {
    total: number;
    failedOnOriginal: number;
    withNeighbours: number;
    /** Answer nothing but an empty or zero result on the original (a count of no rows…): most wrong queries agree. */
    trivialOnOriginal: number;
    /** Of those, answer something else on a kept variant, where the wrong queries stop agreeing. */
    informativeInSuite: number;
  };
  neighbours: {
    total: number;
    /** Answer differently from their gold already on the original. */
    toldApartByOriginal: number;
    /** Answer like their gold on the original: the single-database false positives the variants are for. */
    sameOnOriginal: number;
    /** Of those, told apart by some candidate variant. */
    coverable: number;
    /** Of those, told apart by the kept variants. */
    toldApartBySuite: number;
    byKind: Partial<Record<NeighbourKind, KindCount>>;
    /** Some pairs that answer alike on the original and on every kept variant (equivalent, or missed). */
    notToldApart: { gold: string; neighbour: string }[];
  };
  /** The kept variants in order, what each added, and how many gold answers (non-empty on the original) it empties. */
  variants: { file: string; candidate: number; newlyToldApart: number; toldApart: number; goldsEmptied: number }[];
  candidates: { written: number; rejected: number };
}

export function goldsHash(golds: string[]): string {
  return createHash('sha256')
    .update([...new Set(golds)].sort().join('\n'))
    .digest('hex');
}

const spider = evalMode('spider');
const isGoldFailure = (v: ExecVerdict) => v.reason === 'gold-error' || v.reason === 'gold-timeout';

export async function buildDatabase(
  dbId: string,
  source: string,
  goldSqls: string[],
  outDir: string,
  settings: BuildSettings,
  pool: SqlPool,
): Promise<DatabaseManifest> {
  const golds = [...new Set(goldSqls)].sort();
  const profile = readSourceProfile(source);
  const schema = neighbourSchema(profile);

  // Gold queries on the original: those that fail there score wrong anyway and are left out.
  const [onOriginal] = await judgePairs(
    golds.map((g) => ({ gold: g, pred: g })),
    [source],
    pool,
    settings.timeoutMs,
  );
  const goodGolds = golds.filter((_, i) => !isGoldFailure(onOriginal[i]));
  const nonEmpty = new Set(golds.filter((_, i) => !isGoldFailure(onOriginal[i]) && !onOriginal[i].goldEmpty));
  const trivial = new Set(golds.filter((_, i) => !isGoldFailure(onOriginal[i]) && onOriginal[i].goldTrivial));

  // Neighbours, trusted only when the gold printed back by the parser answers like the gold itself.
  const sets = goodGolds.map((g, i) =>
    neighboursOf(g, schema, createRng(settings.seed, dbId, 'neighbours', i), settings.maxNeighbours),
  );
  const printedCheck = await judgePairs(
    goodGolds.map((g, i) => ({ gold: g, pred: sets[i].printed ?? g })),
    [source],
    pool,
    settings.timeoutMs,
  );
  const pairs: (Pair & { kind: NeighbourKind })[] = [];
  let withNeighbours = 0;
  goodGolds.forEach((g, i) => {
    if (!printedCheck[0][i].exec || sets[i].neighbours.length === 0) return;
    withNeighbours++;
    const asRun = (sql: string) => spider.prepare(g, sql, {}).pred.replace(/\s+/g, ' ');
    const printed = asRun(sets[i].printed!);
    for (const n of sets[i].neighbours) {
      // The evaluator's rewriting (DISTINCT removed…) can make a neighbour the gold again: no near miss then.
      if (asRun(n.sql) !== printed) pairs.push({ gold: g, pred: n.sql, kind: n.kind });
    }
  });
  const [pairsOnOriginal] = await judgePairs(pairs, [source], pool, settings.timeoutMs);
  // A neighbour that fails on the original is no near miss; one that answers alike is a false positive to tell apart.
  const valid = pairs.filter(
    (_, p) => pairsOnOriginal[p].reason !== 'pred-error' && pairsOnOriginal[p].reason !== 'pred-timeout',
  );
  const same = pairs.filter((_, p) => pairsOnOriginal[p].exec);

  // Candidates: golds judged against themselves (a candidate where a gold fails is rejected), then the pairs.
  const work = join(outDir, `.build-${dbId}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const literals = comparedLiterals([...goodGolds, ...valid.map((p) => p.pred)]);
  const files: string[] = [];
  for (let c = 0; c < settings.candidates; c++) {
    const file = join(work, `candidate${c}.sqlite`);
    writeVariant(profile, file, literals, createRng(settings.seed, dbId, 'variant', c));
    files.push(file);
  }
  const boundaries = comparisonBoundaries([...goodGolds, ...valid.map((p) => p.pred)]);
  const anyBoundary = boundaries.literals.length + boundaries.columnPairs.length + boundaries.subqueries.length > 0;
  for (let b = 0; anyBoundary && b < Math.ceil(settings.candidates / 2); b++) {
    const file = join(work, `boundary${b}.sqlite`);
    writeBoundaryVariant(source, profile, file, boundaries, createRng(settings.seed, dbId, 'boundary', b));
    files.push(file);
  }
  const checks: Pair[] = [...goodGolds.map((g) => ({ gold: g, pred: g })), ...same];
  const verdicts = files.length ? await judgePairs(checks, files, pool, settings.timeoutMs) : [];
  const rejected = new Set<number>();
  const toldApart: number[][] = verdicts.map((vs, c) => {
    if (vs.slice(0, goodGolds.length).some(isGoldFailure)) {
      rejected.add(c);
      return [];
    }
    const told: number[] = [];
    same.forEach((p, k) => {
      const v = vs[goodGolds.length + k];
      // Told apart only where the gold still answers something if it did on the original.
      if (!v.exec && !isGoldFailure(v) && !(v.goldEmpty && nonEmpty.has(p.gold))) told.push(k);
    });
    return told;
  });
  // A gold whose answer on the original is trivial (empty, a count of 0) agrees with every wrong query that also
  // finds nothing — a literal misspelt, a join key negated — and no neighbour built from the original's values shows
  // it. Variants where it answers something count towards the cover like a pair told apart.
  const informs: number[][] = verdicts.map((vs, c) =>
    rejected.has(c) ? [] : goodGolds.flatMap((g, i) => (trivial.has(g) && vs[i].goldTrivial === false ? [i] : [])),
  );
  const steps = greedyCover(
    toldApart.map((t, c) => [...t, ...informs[c].map((i) => same.length + i)]),
    settings.variants,
  );
  const informative = new Set(steps.flatMap((s) => informs[s.candidate]));

  const dir = join(outDir, dbId);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const original = `${dbId}.sqlite`;
  copyFileSync(source, join(dir, original));
  const covered = new Set<number>();
  const earlierInformative = new Set<number>();
  const kept: DatabaseManifest['variants'] = steps.map((s, k) => {
    const file = `${dbId}_ts${k + 1}.sqlite`;
    renameSync(files[s.candidate], join(dir, file));
    for (const p of toldApart[s.candidate]) covered.add(p);
    const emptied = goodGolds.filter((g, i) => nonEmpty.has(g) && verdicts[s.candidate][i].goldEmpty).length;
    const step = {
      file,
      candidate: s.candidate,
      newlyToldApart: s.gain - informs[s.candidate].filter((i) => !earlierInformative.has(i)).length,
      toldApart: toldApart[s.candidate].length,
      goldsEmptied: emptied,
    };
    for (const i of informs[s.candidate]) earlierInformative.add(i);
    return step;
  });
  rmSync(work, { recursive: true, force: true });

  const coverable = new Set(toldApart.flat());
  const byKind: DatabaseManifest['neighbours']['byKind'] = {};
  for (const p of valid) {
    const k = (byKind[p.kind] ??= { neighbours: 0, sameOnOriginal: 0, toldApartBySuite: 0 });
    k.neighbours++;
  }
  same.forEach((p, i) => {
    byKind[p.kind]!.sameOnOriginal++;
    if (covered.has(i)) byKind[p.kind]!.toldApartBySuite++;
  });
  const { timeoutMs: _t, ...kept_settings } = settings;
  void _t;
  const manifest: DatabaseManifest = {
    schema: MANIFEST_SCHEMA,
    dbId,
    settings: kept_settings,
    goldsHash: goldsHash(golds),
    files: [original, ...kept.map((v) => v.file)],
    golds: {
      total: golds.length,
      failedOnOriginal: golds.length - goodGolds.length,
      withNeighbours,
      trivialOnOriginal: trivial.size,
      informativeInSuite: informative.size,
    },
    neighbours: {
      total: valid.length,
      toldApartByOriginal: valid.length - same.length,
      sameOnOriginal: same.length,
      coverable: coverable.size,
      toldApartBySuite: covered.size,
      byKind,
      notToldApart: same
        .filter((_, i) => !covered.has(i))
        .slice(0, 10)
        .map((p) => ({ gold: p.gold, neighbour: p.pred })),
    },
    variants: kept,
    candidates: { written: files.length, rejected: rejected.size },
  };
  writeFileSync(join(dir, MANIFEST), JSON.stringify(manifest, null, 1) + '\n');
  return manifest;
}

/** The manifest of a complete suite folder (manifest present, every file it lists present), else undefined. */
export function completeManifest(outDir: string, dbId: string): DatabaseManifest | undefined {
  const path = join(outDir, dbId, MANIFEST);
  if (!existsSync(path)) return undefined;
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as DatabaseManifest;
    return m.schema === MANIFEST_SCHEMA && m.files.every((f) => existsSync(join(outDir, dbId, f))) ? m : undefined;
  } catch {
    return undefined;
  }
}
