// Writes one fuzzed variant of a database: the original's schema statements exactly (so types, keys, NOT NULL,
// UNIQUE, CHECK and defaults are SQLite's own), then a small number of rows per table whose values are drawn from
// the column's existing values, from the literals the gold queries and their neighbours compare it with, and from
// type-appropriate random values. Foreign keys take their values from rows already written to the parent table;
// rows a constraint refuses are drawn again, and rows left dangling (cycles, self references) are deleted until
// PRAGMA foreign_key_check is empty.
import Database from 'better-sqlite3';
import type { Cell } from '../../db/types';
import type { Rng } from '../../util/random';
import { type ColumnInfo, type SourceProfile, type TableProfile, quoteId } from './sourceProfile';

/** Values queries compare a column with, by lower-cased column name. */
type LiteralPool = Map<string, Cell[]>;

interface FuzzOptions {
  /** Rows per table at most (default: drawn per variant from 4, 8, 15, 30). */
  maxRows?: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})(.*)$/;

/** A random value of the column's kind, near the existing ones. INTEGERs are bigint (better-sqlite3 binds a JS
 *  number as REAL), REALs numbers. */
function randomValue(col: ColumnInfo, existing: Cell[], rng: Rng): Cell {
  const ints = existing.filter((v): v is bigint => typeof v === 'bigint').map(Number);
  const reals = existing.filter((v): v is number => typeof v === 'number');
  const strs = existing.filter((v): v is string => typeof v === 'string');
  const numeric = ints.length + reals.length;
  if (col.affinity === 'integer' || (numeric > 0 && numeric >= strs.length && col.affinity !== 'text')) {
    const asInt = col.affinity === 'integer' || reals.length === 0;
    const nums = [...ints, ...reals];
    if (nums.length === 0) return BigInt(rng.int(0, 100));
    let v: number;
    if (rng.next() < 0.5) v = rng.pick(nums) + rng.pick([-1, 1]);
    else {
      const lo = Math.floor(Math.min(...nums)),
        hi = Math.ceil(Math.max(...nums));
      v = rng.int(lo, hi) + (asInt ? 0 : Math.round(rng.next() * 100) / 100);
    }
    return asInt && Number.isSafeInteger(Math.round(v)) ? BigInt(Math.round(v)) : v;
  }
  if (strs.length === 0) return `v${rng.int(0, 999)}`;
  const base = rng.pick(strs);
  const date = DATE.exec(base);
  if (date) {
    const d = new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]) + rng.int(-400, 400)));
    return Number.isNaN(d.getTime()) ? base : d.toISOString().slice(0, 10) + date[4];
  }
  if (/^-?\d+$/.test(base)) return String(Number(base) + rng.pick([-1, 1]));
  // A near miss of an existing value: one character changed, or a suffix.
  if (base.length > 0 && rng.next() < 0.5) {
    const i = rng.int(0, base.length - 1);
    return base.slice(0, i) + String.fromCharCode(97 + rng.int(0, 25)) + base.slice(i + 1);
  }
  return `${base} ${rng.int(1, 9)}`;
}

function freshValue(col: ColumnInfo, existing: Cell[], literals: Cell[], rng: Rng): Cell {
  const r = rng.next();
  if (!col.notNull && col.pk === 0 && r < 0.05) return null;
  if (literals.length > 0 && r < 0.3) return rng.pick(literals);
  if (existing.length > 0 && r < 0.75) return rng.pick(existing);
  return randomValue(col, existing, rng);
}

function isConstraintError(err: unknown): boolean {
  return (
    typeof (err as { code?: unknown }).code === 'string' &&
    (err as { code: string }).code.startsWith('SQLITE_CONSTRAINT')
  );
}

/** Fills `table`: `n` rows if the constraints let it, at most 8n attempts. */
function fillTable(
  db: Database.Database,
  t: TableProfile,
  n: number,
  written: Map<string, Cell[][]>,
  columnsOf: Map<string, ColumnInfo[]>,
  literals: LiteralPool,
  rng: Rng,
): void {
  const rows: Cell[][] = [];
  written.set(t.name.toLowerCase(), rows);
  if (t.columns.length === 0) return;
  const insert = db.prepare(
    `INSERT INTO ${quoteId(t.name)} (${t.columns.map((c) => quoteId(c.name)).join(', ')}) ` +
      `VALUES (${t.columns.map(() => '?').join(', ')})`,
  );
  const index = new Map(t.columns.map((c, i) => [c.name.toLowerCase(), i]));
  const existing = t.values.map((vs) => vs.map((v) => v.value));
  const lits = t.columns.map((c) => literals.get(c.name.toLowerCase()) ?? []);
  for (let attempt = 0; rows.length < n && attempt < 8 * n; attempt++) {
    const base = t.rows.length > 0 && rng.next() < 0.5 ? rng.pick(t.rows) : null;
    const row = t.columns.map((c, i) =>
      base && rng.next() < 0.75 ? base[i] : freshValue(c, existing[i], lits[i], rng),
    );
    // Now and then two numeric columns of a row are equal, so `a < b` and `a <= b` answer differently.
    const numeric = row.flatMap((v, i) => (typeof v === 'bigint' || typeof v === 'number' ? [i] : []));
    if (numeric.length > 1 && rng.next() < 0.15) {
      const [a, b] = rng.shuffle(numeric);
      if (t.columns[a].pk === 0) row[a] = row[b];
    }
    for (const fk of t.foreignKeys) {
      const from = fk.from.map((f) => index.get(f.toLowerCase()));
      if (from.some((i) => i === undefined)) continue;
      const self = fk.parent.toLowerCase() === t.name.toLowerCase();
      const parentRows = written.get(fk.parent.toLowerCase());
      const parentCols = self ? t.columns : columnsOf.get(fk.parent.toLowerCase());
      if (!parentRows || !parentCols) continue; // a parent not in the schema (or not yet written: a cycle)
      const to = fk.to.map((c) => parentCols.findIndex((pc) => pc.name.toLowerCase() === c.toLowerCase()));
      if (to.some((i) => i < 0)) continue;
      const candidates = self ? [...parentRows, row] : parentRows;
      const keep = candidates.some((p) => to.every((j, k) => p[j] === row[from[k]!]));
      if (keep && rng.next() < 0.7) continue;
      const nullable = from.every((i) => !t.columns[i!].notNull);
      if (candidates.length === 0 || (nullable && rng.next() < 0.05)) {
        if (nullable) for (const i of from) row[i!] = null;
        continue;
      }
      const parent = rng.pick(candidates);
      to.forEach((j, k) => {
        row[from[k]!] = parent[j];
      });
    }
    try {
      insert.run(row);
      rows.push(row);
    } catch (err) {
      if (!isConstraintError(err)) throw err;
    }
  }
}

/** Deletes rows PRAGMA foreign_key_check reports until it reports none (rows whose parent went missing). */
function dropDangling(db: Database.Database, tables: TableProfile[]): void {
  for (let round = 0; round < 20; round++) {
    let dangling = 0;
    for (const t of tables) {
      let bad: { rowid: number | null }[];
      try {
        bad = db.prepare(`PRAGMA foreign_key_check(${quoteId(t.name)})`).all() as { rowid: number | null }[];
      } catch {
        continue; // "foreign key mismatch": the schema's key is not enforceable (the original has the same)
      }
      const del = db.prepare(`DELETE FROM ${quoteId(t.name)} WHERE rowid = ?`);
      for (const b of bad) {
        if (b.rowid === null) continue;
        del.run(b.rowid);
        dangling++;
      }
    }
    if (dangling === 0) return;
  }
}

/** Writes a variant of `profile` at `file` (which must not exist). */
export function writeVariant(
  profile: SourceProfile,
  file: string,
  literals: LiteralPool,
  rng: Rng,
  opts: FuzzOptions = {},
): void {
  const db = new Database(file);
  try {
    db.pragma(`encoding = '${profile.encoding.replace(/'/g, '')}'`);
    db.pragma('foreign_keys = OFF');
    db.pragma('journal_mode = MEMORY');
    for (const sql of profile.schema) db.exec(sql);
    const maxRows = opts.maxRows ?? rng.pick([4, 8, 15, 30]);
    const columnsOf = new Map(profile.tables.map((t) => [t.name.toLowerCase(), t.columns]));
    const written = new Map<string, Cell[][]>();
    db.transaction(() => {
      for (const t of profile.tables) {
        const lo = Math.max(1, Math.floor(maxRows / 2));
        const n = Math.min(rng.int(lo, maxRows), t.rowCount === 0 ? 3 : 2 * t.rowCount + 2);
        fillTable(db, t, n, written, columnsOf, literals, rng);
      }
      dropDangling(db, profile.tables);
    })();
    for (const sql of profile.triggers) db.exec(sql);
  } finally {
    db.close();
  }
}
