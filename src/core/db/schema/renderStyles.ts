// The three prompt layouts of the papers. Each takes an already-trimmed view of the schema (see truncate.ts).
//  list  — SkyRL-SQL / SQL-Trail prompts: "Table: t" then "- col (TYPE, PRIMARY KEY)". Their appendices show no foreign
//          keys; we add them as a closing "Foreign keys:" block of `a.x = b.y` lines (the Spider-prompt convention).
//  ddl   — MTSQL-R1 App. D (CodeS/OmniSQL): lower-case `create table` with `primary key (...)` and
//          `foreign key (x) references t(y)` lines, each followed by a /* N example rows from table t: */ block.
//  names — SkyRL-SQL App. D.1 no-schema setting: table names only.
import type { Cell } from '../types';
import type { TableInfo, ColumnDescriptions } from './types';
import { quoteIdentIfNeeded as qi } from './quote';
import { longest } from '../../util/extent';

export type SchemaStyle = 'list' | 'ddl' | 'names';
export const SCHEMA_STYLES: readonly SchemaStyle[] = ['list', 'ddl', 'names'];

/** A table as it will be shown: maybe fewer columns and rows than it has. */
export interface ShownTable {
  table: TableInfo;
  columns: TableInfo['columns'];
  omittedColumns: number;
  rows: Cell[][];
}

export function renderTables(
  style: SchemaStyle,
  shown: ShownTable[],
  descriptions: ColumnDescriptions | undefined,
): string {
  if (style === 'names')
    return shown.map((s) => (s.table.kind === 'view' ? `${s.table.name} (view)` : s.table.name)).join('\n');
  if (style === 'ddl') return shown.map((s) => ddlBlock(s, descriptions?.[s.table.name])).join('\n');
  const blocks = shown.map((s) => listBlock(s, descriptions?.[s.table.name]));
  const fks = shown.flatMap((s) =>
    s.table.foreignKeys.flatMap((fk) =>
      fk.from.map(
        (from, i) => `${s.table.name}.${from} = ${fk.table}.${fk.to[i] ?? primaryKeyOf(shown, fk.table)[i] ?? '?'}`,
      ),
    ),
  );
  if (fks.length > 0) blocks.push(['Foreign keys:', ...fks].join('\n'));
  return blocks.join('\n\n');
}

function primaryKeyOf(shown: ShownTable[], table: string): string[] {
  return shown.find((s) => s.table.name.toLowerCase() === table.toLowerCase())?.table.primaryKey ?? [];
}

function comment(desc: string | undefined): string {
  return desc ? ` -- ${desc.replace(/\s+/g, ' ').trim()}` : '';
}

function listBlock(s: ShownTable, desc: Record<string, string> | undefined): string {
  const lines = [`${s.table.kind === 'view' ? 'View' : 'Table'}: ${s.table.name}`];
  for (const c of s.columns) {
    const attrs = [c.type || 'ANY', ...(c.pkIndex > 0 ? ['PRIMARY KEY'] : [])];
    lines.push(`- ${c.name} (${attrs.join(', ')})${comment(desc?.[c.name])}`);
  }
  if (s.omittedColumns > 0) lines.push(`- … ${s.omittedColumns} more columns`);
  if (s.rows.length > 0) {
    lines.push(`${s.rows.length} example rows:`);
    lines.push(...sampleTable(s));
  }
  return lines.join('\n');
}

function ddlBlock(s: ShownTable, desc: Record<string, string> | undefined): string {
  const t = s.table;
  const lines: string[] = [];
  if (t.kind === 'view') {
    lines.push(`-- view ${qi(t.name)}`, t.sql.trim() || `create view ${qi(t.name)}`);
  } else {
    const body: string[] = s.columns.map((c) => `    ${qi(c.name)}${c.type ? ' ' + c.type : ''}`);
    if (s.omittedColumns > 0) body.push(`    -- … ${s.omittedColumns} more columns`);
    if (t.primaryKey.length > 0) body.push(`    primary key (${t.primaryKey.map(qi).join(', ')})`);
    for (const fk of t.foreignKeys) {
      body.push(
        `    foreign key (${fk.from.map(qi).join(', ')}) ` +
          `references ${qi(fk.table)}${fk.to.length ? `(${fk.to.map(qi).join(', ')})` : ''}`,
      );
    }
    // Commas separate definitions; a description comment goes after the comma so the DDL stays valid.
    const isComment = (line: string) => line.trimStart().startsWith('--');
    const lastDefinition = body.reduce((last, line, i) => (isComment(line) ? last : i), -1);
    const withCommas = body.map((line, i) => {
      const col = i < s.columns.length ? s.columns[i] : undefined;
      const sep = i < lastDefinition && !isComment(line) ? ',' : '';
      return line + sep + comment(col ? desc?.[col.name] : undefined);
    });
    lines.push(`create table ${qi(t.name)} (`, ...withCommas, ')');
  }
  if (s.rows.length > 0) {
    lines.push('/*', `${s.rows.length} example rows from table ${t.name}:`, ...sampleTable(s), '*/');
  }
  return lines.join('\n');
}

/** Columns padded to their widest cell plus four spaces, as in MTSQL-R1's example blocks. */
function sampleTable(s: ShownTable): string[] {
  const n = s.columns.length;
  const grid = [
    s.columns.map((c) => c.name),
    ...s.rows.map((r) => r.slice(0, n).map((v, j) => cellText(v, s.columns[j].type))),
  ];
  const widths = s.columns.map((_, j) => longest(grid.map((row) => row[j] ?? '')));
  return grid.map((row) =>
    row
      .map((cell, j) => (j === n - 1 ? cell : cell.padEnd(widths[j] + 4)))
      .join('')
      .trimEnd(),
  );
}

const MAX_CELL = 60;

/** REAL columns hand back whole numbers as JS integers; show them as Python and SQLite's shell would (14.0). */
function cellText(v: Cell, declaredType: string): string {
  let text: string;
  if (v === null) text = 'NULL';
  else if (typeof v === 'number' && Number.isInteger(v) && /REAL|FLOA|DOUB/i.test(declaredType)) text = v.toFixed(1);
  else if (v instanceof Uint8Array) text = `<blob ${v.length} bytes>`;
  else text = String(v).replace(/\s+/g, ' ');
  return text.length > MAX_CELL ? text.slice(0, MAX_CELL - 1) + '…' : text;
}
