// Turns a SchemaInfo into prompt text, fitting it to a character budget when one is given.
//
// Truncation is deterministic and goes in this order, stopping as soon as the text fits `maxChars`:
//   1. drop every table's sample rows;
// 2. cap each table's columns at 64, 32, 16, then 8 (the first columns are kept, the rest counted in a "… N more"
// line);
//   3. omit whole tables from the end (sqlite_master order), adding one closing line that names the omitted tables.
// If even that does not fit, the result is just the omission line — the budget is a target, not a guarantee.
import type { SchemaInfo, ColumnDescriptions } from './types';
import { renderTables, type SchemaStyle, type ShownTable } from './renderStyles';

export interface RenderOptions {
  style?: SchemaStyle;
  /** Example rows per table, at most what introspection sampled. Default: 0 for list and names, 3 for ddl. */
  sampleRows?: number;
  /** Character budget; see the truncation order above. Default: none. */
  maxChars?: number;
  /** BIRD-style column descriptions, shown as `-- comments` (list and ddl styles). */
  descriptions?: ColumnDescriptions;
}

export const DEFAULT_DDL_SAMPLE_ROWS = 3;
const COLUMN_CAPS = [64, 32, 16, 8];

export function renderSchema(info: SchemaInfo, opts: RenderOptions = {}): string {
  const style = opts.style ?? 'list';
  const rows = Math.max(0, opts.sampleRows ?? (style === 'ddl' ? DEFAULT_DDL_SAMPLE_ROWS : 0));
  const budget = opts.maxChars ?? Infinity;
  const shown = (columnCap: number, keepRows: boolean): ShownTable[] =>
    info.tables.map((t) => ({
      table: t,
      columns: t.columns.slice(0, columnCap),
      omittedColumns: Math.max(0, t.columns.length - columnCap),
      rows: keepRows ? t.sampleRows.slice(0, rows) : [],
    }));
  const render = (tables: ShownTable[]) => renderTables(style, tables, opts.descriptions);

  let text = render(shown(Infinity, true));
  if (text.length <= budget) return text;
  text = render(shown(Infinity, false));
  if (text.length <= budget) return text;
  for (const cap of COLUMN_CAPS) {
    text = render(shown(cap, false));
    if (text.length <= budget) return text;
  }
  const all = shown(COLUMN_CAPS[COLUMN_CAPS.length - 1], false);
  for (let keep = all.length - 1; keep >= 0; keep--) {
    const omitted = all.slice(keep).map((s) => s.table.name);
    const note = `-- ${omitted.length} of ${all.length} tables omitted for length: ${omitted.join(', ')}`;
    text = keep > 0 ? `${render(all.slice(0, keep))}\n\n${note}` : note;
    if (text.length <= budget) return text;
  }
  return text;
}
