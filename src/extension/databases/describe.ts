// The words the Databases view puts beside each item. Pure, so they are unit-tested without VS Code.
import type { ColumnInfo, ForeignKeyInfo, TableInfo } from '../../core/db/schema/types';

/** "1 row", "1,234 rows", "rows: ?" when counting failed or ran past its budget. */
export function rowCountText(n: number | null): string {
  if (n === null) return 'rows: ?';
  return `${n.toLocaleString('en-US')} ${n === 1 ? 'row' : 'rows'}`;
}

/** A table's description: "1,234 rows"; a view's: "view · 12 rows". */
export function tableDescription(t: Pick<TableInfo, 'kind' | 'rowCount'>): string {
  return t.kind === 'view' ? `view · ${rowCountText(t.rowCount)}` : rowCountText(t.rowCount);
}

type ColumnRole = 'pk' | 'fk' | 'plain';

/** The foreign keys a column takes part in, as "table.column" targets (a key naming no columns means the PK). */
export function columnTargets(column: string, foreignKeys: readonly ForeignKeyInfo[]): string[] {
  const out: string[] = [];
  for (const fk of foreignKeys) {
    const i = fk.from.indexOf(column);
    if (i < 0) continue;
    out.push(fk.to.length > i ? `${fk.table}.${fk.to[i]}` : fk.table);
  }
  return out;
}

interface ColumnView {
  role: ColumnRole;
  /** "INTEGER · PK", "INTEGER · FK → author.author_id", "TEXT · NOT NULL", "(no type)". */
  description: string;
  tooltip: string;
}

export function describeColumn(
  c: ColumnInfo,
  table: Pick<TableInfo, 'name' | 'primaryKey' | 'foreignKeys'>,
): ColumnView {
  const parts = [c.type === '' ? '(no type)' : c.type];
  const pk = c.pkIndex > 0;
  const targets = columnTargets(c.name, table.foreignKeys);
  if (pk) parts.push(table.primaryKey.length > 1 ? `PK ${c.pkIndex}/${table.primaryKey.length}` : 'PK');
  for (const t of targets) parts.push(`FK → ${t}`);
  if (c.notNull && !pk) parts.push('NOT NULL');
  const lines = [`${table.name}.${c.name}: ${c.type === '' ? 'no declared type' : c.type}`];
  if (pk)
    lines.push(
      table.primaryKey.length > 1
        ? `part ${c.pkIndex} of the primary key (${table.primaryKey.join(', ')})`
        : 'primary key',
    );
  for (const t of targets) lines.push(`references ${t}`);
  if (c.notNull) lines.push('NOT NULL');
  return {
    role: pk ? 'pk' : targets.length > 0 ? 'fk' : 'plain',
    description: parts.join(' · '),
    tooltip: lines.join('\n'),
  };
}

/** Copy DDL's confirmation: what was copied and how long ("DDL of shop.sqlite copied to the clipboard (12 lines)"). */
export function ddlCopiedText(what: string, script: string): string {
  const n = script.split('\n').filter((l) => l.trim() !== '').length;
  return `${what} copied to the clipboard (${n} line${n === 1 ? '' : 's'})`;
}
