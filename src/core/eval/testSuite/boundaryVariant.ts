// Writes one boundary variant of a database: a byte copy of the original (so every gold query keeps its rows, joins
// and non-empty answers) in which some rows are moved exactly onto the gold queries' boundaries (boundaries.ts):
// a compared column set to the literal (now and then the literal ±1) in a few rows or in every row of one group (so
// `HAVING avg(col) > 60` meets a group whose average is 60), one of two compared columns set to the other, a column
// compared with a scalar query set to that query's value on this very variant (another row offsetting the change, so
// an average stays where it was). Keys — primary, foreign, and columns other tables' foreign keys refer to — are
// never changed, so foreign keys hold as in the original; UPDATE OR IGNORE leaves rows a constraint refuses as they
// were; triggers are dropped while the rows change and created again after.
import { chmodSync, copyFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Cell } from '../../db/types';
import type { Boundaries } from './boundaries';
import type { Rng } from '../../util/random';
import { type SourceProfile, type TableProfile, quoteId } from './sourceProfile';

/** Rowids fetched whole up to this many rows; larger tables are sampled. */
const ROWID_LIMIT = 20_000;

interface Target {
  table: TableProfile;
  /** The column's spelling in the schema. */
  column: string;
  rowids: bigint[];
}

/** Columns no boundary may change: lower-cased `table\0column`. */
function keyColumns(profile: SourceProfile): Set<string> {
  const keys = new Set<string>();
  for (const t of profile.tables) {
    for (const c of t.columns) if (c.pk > 0) keys.add(`${t.name.toLowerCase()}\u0000${c.name.toLowerCase()}`);
    for (const fk of t.foreignKeys) {
      for (const f of fk.from) keys.add(`${t.name.toLowerCase()}\u0000${f.toLowerCase()}`);
      for (const p of fk.to) keys.add(`${fk.parent.toLowerCase()}\u0000${p.toLowerCase()}`);
    }
  }
  return keys;
}

function rowidsOf(db: Database.Database, t: TableProfile, rng: Rng): bigint[] {
  const q = quoteId(t.name);
  try {
    if (t.rowCount <= ROWID_LIMIT) {
      return db.prepare(`SELECT rowid FROM ${q} ORDER BY rowid`).pluck().safeIntegers().all() as bigint[];
    }
    const at = db.prepare(`SELECT rowid FROM ${q} ORDER BY rowid LIMIT 1 OFFSET ?`).pluck().safeIntegers();
    return Array.from({ length: 200 }, () => at.get(rng.int(0, t.rowCount - 1)) as bigint);
  } catch {
    return []; // a WITHOUT ROWID table: left as it is
  }
}

/** A few of the rows: 1 to a third of them. */
function someRows(rowids: bigint[], rng: Rng): bigint[] {
  const k = rng.int(1, Math.max(1, Math.ceil(rowids.length / 3)));
  return rng.shuffle(rowids).slice(0, k);
}

function near(v: Cell, rng: Rng): Cell {
  const r = rng.next();
  if (r < 0.7) return v;
  const d = r < 0.85 ? -1 : 1;
  return typeof v === 'bigint' ? v + BigInt(d) : typeof v === 'number' ? v + d : v;
}

const isNumber = (v: unknown): v is number | bigint => typeof v === 'number' || typeof v === 'bigint';

/** Writes a boundary variant of the database at `source` (profiled as `profile`) at `file`. */
export function writeBoundaryVariant(
  source: string,
  profile: SourceProfile,
  file: string,
  boundaries: Boundaries,
  rng: Rng,
): void {
  copyFileSync(source, file);
  chmodSync(file, 0o644); // the copy keeps the original's mode, which may be read-only
  const db = new Database(file);
  try {
    db.pragma('foreign_keys = OFF');
    const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all() as string[];
    for (const name of triggers) db.exec(`DROP TRIGGER ${quoteId(name)}`);
    const keys = keyColumns(profile);
    const rowids = new Map<string, bigint[]>();
    const targetsOf = (column: string): Target[] =>
      profile.tables.flatMap((table) => {
        const c = table.columns.find((x) => x.name.toLowerCase() === column);
        if (!c || keys.has(`${table.name.toLowerCase()}\u0000${column}`)) return [];
        const key = table.name.toLowerCase();
        if (!rowids.has(key)) rowids.set(key, rowidsOf(db, table, rng));
        const ids = rowids.get(key)!;
        return ids.length ? [{ table, column: c.name, rowids: ids }] : [];
      });
    const set = (t: Target, value: string, params: unknown[], where: string) => {
      try {
        db.prepare(`UPDATE OR IGNORE ${quoteId(t.table.name)} SET ${quoteId(t.column)} = ${value} WHERE ${where}`).run(
          ...params,
        );
      } catch {
        // a constraint IGNORE does not cover (or a value SQLite refuses): the rows stay as they were
      }
    };
    const setRows = (t: Target, value: string, params: unknown[], ids: bigint[]) => {
      for (const id of ids) set(t, value, [...params, id], 'rowid = ?');
    };

    db.transaction(() => {
      for (const b of boundaries.literals) {
        for (const t of targetsOf(b.column)) {
          if (rng.next() < 0.5) continue;
          const value = near(b.value, rng);
          // Groups: the queries' own, else rows sharing a parent row.
          const named = boundaries.groupColumns.filter(
            (g) => g !== b.column && t.table.columns.some((c) => c.name.toLowerCase() === g),
          );
          const groups = named.length
            ? named
            : t.table.foreignKeys.flatMap((fk) => fk.from.map((f) => f.toLowerCase()));
          if (groups.length > 0 && rng.next() < 0.5) {
            // Every row of one group, so the group's aggregate sits on the boundary.
            const group = rng.pick(groups);
            const g = t.table.columns.find((c) => c.name.toLowerCase() === group)!;
            const row = rng.pick(t.rowids);
            const at = db
              .prepare(`SELECT ${quoteId(g.name)} FROM ${quoteId(t.table.name)} WHERE rowid = ?`)
              .pluck()
              .safeIntegers()
              .get(row);
            set(t, '?', [value, at], `${quoteId(g.name)} IS ?`);
          } else setRows(t, '?', [value], someRows(t.rowids, rng));
        }
      }
      for (const [a, b] of boundaries.columnPairs) {
        for (const [to, from] of rng.next() < 0.5 ? [[a, b]] : [[b, a]]) {
          for (const t of targetsOf(to)) {
            const other = t.table.columns.find((c) => c.name.toLowerCase() === from);
            if (!other || rng.next() < 0.3) continue;
            setRows(t, quoteId(other.name), [], someRows(t.rowids, rng));
          }
        }
      }
      for (const s of boundaries.subqueries) {
        for (const t of targetsOf(s.column)) {
          if (rng.next() < 0.3) continue;
          let value: unknown;
          try {
            value = db.prepare(`SELECT (${s.sql})`).pluck().safeIntegers().get();
          } catch {
            break; // correlated, or not runnable alone
          }
          if (value === null || value === undefined) continue;
          const [i, j] = rng.shuffle(t.rowids);
          const read = db
            .prepare(`SELECT ${quoteId(t.column)} FROM ${quoteId(t.table.name)} WHERE rowid = ?`)
            .pluck()
            .safeIntegers();
          const old = read.get(i);
          set(t, '?', [value, i], 'rowid = ?');
          // Another row takes the difference, so a sum or an average over the column stays `value`.
          if (j !== undefined && isNumber(old) && isNumber(value) && isNumber(read.get(j))) {
            set(t, `${quoteId(t.column)} + ?`, [Number(old) - Number(value), j], 'rowid = ?');
          }
        }
      }
    })();
    for (const sql of profile.triggers) db.exec(sql);
  } finally {
    db.close();
  }
}
