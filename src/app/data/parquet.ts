// Parquet files of nested training tables through hyparquet-writer (MIT): the column description of
// core/training/columns.ts becomes a Parquet schema (structs as groups, lists in the standard 3-level LIST layout that
// pyarrow and Hugging Face datasets read as list<...>), each row is checked against it, and the file is written whole
// or not at all. Only the CLI's use cases import this (the extension bundle stays small).
import { parquetWriteBuffer } from 'hyparquet-writer';
import { normalizeRows, type Column } from '../../core/training/columns';
import { writeFileAtomic } from '../../core/util/atomicWrite';

type SchemaElement = NonNullable<Parameters<typeof parquetWriteBuffer>[0]['schema']>[number];

function elements(col: Column): SchemaElement[] {
  const repetition_type = col.optional ? 'OPTIONAL' : 'REQUIRED';
  switch (col.kind) {
    case 'string':
      return [{ name: col.name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type }];
    case 'int64':
      return [{ name: col.name, type: 'INT64', repetition_type }];
    case 'bool':
      return [{ name: col.name, type: 'BOOLEAN', repetition_type }];
    case 'struct':
      return [{ name: col.name, repetition_type, num_children: col.fields.length }, ...col.fields.flatMap(elements)];
    case 'list':
      return [
        { name: col.name, repetition_type, converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        ...elements({ ...col.element, name: 'element' }),
      ];
  }
}

/** The Parquet schema (flattened, depth first, as the file footer holds it) of a table with these columns. */
export function parquetSchema(columns: readonly Column[]): SchemaElement[] {
  return [{ name: 'root', num_children: columns.length }, ...columns.flatMap(elements)];
}

/** The file's bytes; throws ColumnError when a row does not fit the columns. */
export function parquetBytes(
  columns: readonly Column[],
  rows: readonly Record<string, unknown>[],
  meta: Record<string, string> = {},
): Uint8Array {
  const normalized = normalizeRows(columns, rows);
  const buffer = parquetWriteBuffer({
    columnData: columns.map((c) => ({ name: c.name, data: normalized.map((r) => r[c.name]) })),
    schema: parquetSchema(columns),
    createdBy: 'quarry',
    kvMetadata: Object.entries(meta).map(([key, value]) => ({ key, value })),
  });
  return new Uint8Array(buffer);
}

/** Writes `rows` to `out` as Parquet (temporary file renamed into place). */
export async function writeParquet(
  out: string,
  columns: readonly Column[],
  rows: readonly Record<string, unknown>[],
  meta: Record<string, string> = {},
): Promise<void> {
  await writeFileAtomic(out, parquetBytes(columns, rows, meta));
}
