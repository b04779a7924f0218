// What introspection learns about a database, in a plain shape that renderers, the CLI (--json) and rewards share.
import type { Cell } from '../types';

export interface ColumnInfo {
  name: string;
  /** The type as declared in CREATE TABLE ('' when none was declared, as SQLite allows). */
  type: string;
  notNull: boolean;
  /** 1-based position in the primary key, 0 when the column is not part of it. */
  pkIndex: number;
}

export interface ForeignKeyInfo {
  /** Columns of this table, in key order. */
  from: string[];
  table: string;
  /** Referenced columns; empty when the key names none (it then means the referenced table's primary key). */
  to: string[];
}

export interface TableInfo {
  name: string;
  kind: 'table' | 'view';
  columns: ColumnInfo[];
  /** Primary-key column names in key order (composite keys have several). */
  primaryKey: string[];
  foreignKeys: ForeignKeyInfo[];
  /** null when counting failed (a view over a missing table, for example). */
  rowCount: number | null;
  /** The first rows as stored, at most the sampleRows asked for. */
  sampleRows: Cell[][];
  /** The CREATE statement SQLite keeps in sqlite_master. */
  sql: string;
}

export interface SchemaInfo {
  tables: TableInfo[];
}

/** table → column → description (BIRD-style); either level may be missing. */
export type ColumnDescriptions = Record<string, Record<string, string>>;
