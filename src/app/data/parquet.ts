// Parquet files of nested training tables through hyparquet-writer (MIT): the column description of
// core/training/columns.ts becomes a Parquet schema (structs as groups, lists in the standard 3-level LIST layout that
// pyarrow and Hugging Face datasets read as list<...>), each row is checked against it, and the file is written whole
// or not at all. Rows are written in row groups of bounded size, so memory is bounded by a row group, not the file.
// Only the CLI's use cases import this (the extension bundle stays small).
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { normalizeValue, type Column } from '../../core/training/columns';
import { openAtomicFile, type AtomicFile } from '../../core/util/atomicWrite';

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

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
function parquetSchema(columns: readonly Column[]): SchemaElement[] {
  return [{ name: 'root', num_children: columns.length }, ...columns.flatMap(elements)];
}

/** Rows per row group unless their JSON reaches ROW_GROUP_BYTES first. */
const ROW_GROUP_ROWS = 10_000;
/** About this much row data (as JSON) per row group: what the writer holds in memory at most, whatever the rows. */
const ROW_GROUP_BYTES = 64 * 1024 ** 2;

export interface RowGroupLimits {
  rows?: number;
  bytes?: number;
}

/** hyparquet-writer's byte writer, emptied into the file after each row group (so it holds one at most). */
class FlushingWriter extends ByteWriter {
  constructor(private readonly file: AtomicFile) {
    super(1 << 20);
  }

  flush(): Promise<void> {
    // A copy: the stream may still hold the chunk when the next row group overwrites this buffer.
    const chunk = new Uint8Array(this.buffer.slice(0, this.index));
    this.index = 0;
    return this.file.write(chunk);
  }

  override finish(): Promise<void> {
    return this.flush();
  }
}

/**
 * A Parquet file written row group by row group: rows are checked against the columns as they are added (ColumnError
 * names the row and the column path), buffered until a group is full, then encoded and streamed out. The file appears
 * at `out` only when finish() succeeds; abort() (or a failure) leaves nothing behind.
 */
export class ParquetRowWriter {
  private readonly root: Column;
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private pending: Record<string, unknown>[] = [];
  private pendingBytes = 0;
  private rows = 0;
  private groups = 0;

  private constructor(
    private readonly file: AtomicFile,
    private readonly columns: readonly Column[],
    private readonly writer: ParquetWriter,
    limits: RowGroupLimits,
  ) {
    this.root = { name: 'row', kind: 'struct', fields: [...columns] };
    this.maxRows = limits.rows ?? ROW_GROUP_ROWS;
    this.maxBytes = limits.bytes ?? ROW_GROUP_BYTES;
  }

  static async open(
    out: string,
    columns: readonly Column[],
    meta: Record<string, string> = {},
    limits: RowGroupLimits = {},
  ): Promise<ParquetRowWriter> {
    const file = await openAtomicFile(out);
    const writer = new ParquetWriter({
      writer: new FlushingWriter(file),
      schema: parquetSchema(columns),
      createdBy: 'quarry',
      kvMetadata: Object.entries(meta).map(([key, value]) => ({ key, value })),
    });
    return new ParquetRowWriter(file, columns, writer, limits);
  }

  /** Adds a row; `size` is about its size in bytes (its JSON's length), to bound a row group's memory. */
  async add(row: Record<string, unknown>, size = 0): Promise<void> {
    this.pending.push(normalizeValue(this.root, row, `row ${this.rows++}`) as Record<string, unknown>);
    this.pendingBytes += size;
    if (this.pending.length >= this.maxRows || this.pendingBytes >= this.maxBytes) await this.writeGroup();
  }

  private async writeGroup(): Promise<void> {
    const rows = this.pending;
    if (rows.length === 0) return;
    this.pending = [];
    this.pendingBytes = 0;
    this.groups++;
    await this.writer.write({
      columnData: this.columns.map((c) => ({ name: c.name, data: rows.map((r) => r[c.name]) })),
      rowGroupSize: rows.length,
    });
  }

  /** Writes the last row group and the footer, then puts the file in place. */
  async finish(): Promise<{ rows: number; rowGroups: number; bytes: number; sha256: string }> {
    await this.writeGroup();
    await this.writer.finish();
    const { bytes, sha256 } = await this.file.commit();
    return { rows: this.rows, rowGroups: this.groups, bytes, sha256 };
  }

  async abort(): Promise<void> {
    await this.file.abort();
  }
}
