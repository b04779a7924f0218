// The whole result of one statement, a page at a time: each page (and the total, filtered and sorted) is asked of
// SQLite through the sandbox pool with pagedQuery's wrapper, so a grid shows "rows 201–400 of 9,959" and sorts the
// whole result, not the rows it happens to hold. Statements SQLite cannot take as a subquery (PRAGMA, EXPLAIN) are
// run once with a row cap and paged in memory, which the page says.
import type { SqlPool } from './pool';
import type { Cell, ErrorClass, ExecResult } from './types';
import { countSql, pageableSql, pageSql, type ColumnFilter, type PageSpec } from './pagedQuery';

/** Longest text cell a page keeps; longer ones are cut (the page says so). */
const PAGE_CELL_CHARS = 2000;
/** Rows kept of a statement that cannot be paged by SQLite (PRAGMA, EXPLAIN). */
const UNPAGED_ROW_CAP = 10_000;

export interface ResultSource {
  db: string;
  sql: string;
  timeoutMs: number;
}

interface PageResult {
  ok: true;
  columns: string[];
  rows: Cell[][];
  /** Columns whose cells on this page are all REAL (or NULL): integral values are shown as 14.0, not 14. */
  realColumns: boolean[];
  offset: number;
  /** Rows of the whole result after the filters; null when counting failed (the reason is in notes). */
  total: number | null;
  /** False for a PRAGMA/EXPLAIN result: sorting and filters are not offered. */
  pageable: boolean;
  /** Everything cut or left out, in words: cell cap, row cap, a count that timed out. */
  notes: string[];
  ms: number;
}

interface PageFailure {
  ok: false;
  errorClass: ErrorClass | null;
  error: string;
  ms: number;
}

export type PageOutcome = PageResult | PageFailure;

interface PageOptions {
  /** Count the rows after the filters (default true; export counts once, not per chunk). */
  count?: boolean;
  /** Longest text cell kept (default PAGE_CELL_CHARS). */
  cellChars?: number;
  /** Integers as bigints, so every JS number in the rows is a REAL (an export writes 14.0, not 14). */
  exactTypes?: boolean;
}

/** Longest text cell an export keeps (the sandbox's per-result byte cap still applies to each chunk). */
const EXPORT_CELL_CHARS = 1_000_000;

function realColumnsOf(r: ExecResult, columns: number): boolean[] {
  return Array.from({ length: columns }, (_, i) => {
    const s = r.columnStorage?.[i];
    return !!s && s.real && !s.integer && !s.text && !s.blob;
  });
}

function failed(r: ExecResult): PageFailure {
  return { ok: false, errorClass: r.errorClass, error: r.error ?? 'the query failed', ms: r.ms };
}

const n = (x: number) => x.toLocaleString('en-US');

export class ResultPages {
  /** Column names, once the statement has run. */
  private columns: string[] | null = null;
  private readonly base: string | null;

  constructor(
    private readonly pool: SqlPool,
    readonly source: ResultSource,
  ) {
    this.base = pageableSql(source.sql);
  }

  get pageable(): boolean {
    return this.base !== null;
  }

  /** One page of the whole result, with the total after the filters. */
  async page(spec: PageSpec, signal?: AbortSignal, opts: PageOptions = {}): Promise<PageOutcome> {
    if (this.base === null) return this.unpagedPage(spec, signal, opts.exactTypes === true);
    const cellChars = opts.cellChars ?? PAGE_CELL_CHARS;
    const integersAsBigint = opts.exactTypes === true;
    const started = performance.now();
    const { db, timeoutMs } = this.source;
    let total: number | null = null;
    let first: ExecResult | null = null;
    if (this.columns === null) {
      // The statement as written gives the column names (and, for the first plain page, the rows and the count).
      const plain = spec.offset === 0 && spec.order === null && activeFilters(spec.filters).length === 0;
      first = await this.pool.exec(
        { db, sql: this.base, maxRows: plain ? spec.limit : 1, timeoutMs, maxCellChars: cellChars, integersAsBigint },
        signal,
      );
      if (!first.ok) return failed(first);
      this.columns = first.columns;
      if (!plain) first = null;
      else if (first.rowCountExact !== false) total = first.rowCount;
    }
    const columns = this.columns;
    let pageResult = first;
    if (!pageResult) {
      pageResult = await this.pool.exec(
        {
          db,
          sql: pageSql(this.base, columns.length, spec),
          maxRows: spec.limit,
          timeoutMs,
          maxCellChars: cellChars,
          integersAsBigint,
        },
        signal,
      );
      if (!pageResult.ok) return failed(pageResult);
    }
    const notes: string[] = [];
    if (total === null && opts.count !== false) {
      const counted = await this.pool.exec(
        { db, sql: countSql(this.base, columns.length, spec.filters), maxRows: 1, timeoutMs },
        signal,
      );
      if (counted.ok) total = Number(counted.rows[0]?.[0] ?? 0);
      else if (counted.errorClass === 'timeout')
        notes.push(`counting the rows took over ${n(timeoutMs)} ms: total unknown`);
      else notes.push(`the rows could not be counted: ${counted.error}`);
    }
    // `truncated` also means rows past the cap, which a first plain page of a longer result always has.
    if (pageResult.cellsCut) notes.push(`cells longer than ${n(cellChars)} characters are cut (…)`);
    return {
      ok: true,
      columns,
      rows: pageResult.rows.slice(0, spec.limit),
      realColumns: realColumnsOf(pageResult, columns.length),
      offset: spec.offset,
      total,
      pageable: true,
      notes,
      ms: performance.now() - started,
    };
  }

  /** The one run of an unpageable statement, per cell typing (integers as numbers, or as bigints for export). */
  private readonly unpagedResults = new Map<boolean, ExecResult>();

  private async unpagedPage(spec: PageSpec, signal?: AbortSignal, exactTypes = false): Promise<PageOutcome> {
    const started = performance.now();
    let r = this.unpagedResults.get(exactTypes);
    if (!r) {
      r = await this.pool.exec(
        { ...this.source, maxRows: UNPAGED_ROW_CAP, maxCellChars: PAGE_CELL_CHARS, integersAsBigint: exactTypes },
        signal,
      );
      if (!r.ok) return failed(r);
      this.unpagedResults.set(exactTypes, r);
    }
    const notes = ['this kind of statement (PRAGMA, EXPLAIN) is not paged, sorted or filtered by SQLite'];
    if (r.rowCount > r.rows.length) notes.push(`only the first ${n(r.rows.length)} of ${n(r.rowCount)} rows are kept`);
    if (r.cellsCut) notes.push(`cells longer than ${n(PAGE_CELL_CHARS)} characters are cut (…)`);
    return {
      ok: true,
      columns: r.columns,
      rows: r.rows.slice(spec.offset, spec.offset + spec.limit),
      realColumns: realColumnsOf(r, r.columns.length),
      offset: spec.offset,
      total: r.rows.length,
      pageable: false,
      notes,
      ms: performance.now() - started,
    };
  }

  /**
   * Every row of the whole result (filtered and sorted as given), `chunk` rows at a time, for export: integers come
   * as bigints, so a JS number is always a REAL (`ExportText` writes it as one). Stops between chunks when `signal`
   * aborts (the running chunk is cancelled by the pool).
   */
  async *allRows(
    order: PageSpec['order'],
    filters: ColumnFilter[],
    chunk: number,
    signal?: AbortSignal,
  ): AsyncGenerator<{ columns: string[]; rows: Cell[][]; total: number | null }> {
    let offset = 0;
    for (;;) {
      const p = await this.page({ offset, limit: chunk, order, filters }, signal, {
        count: offset === 0,
        cellChars: EXPORT_CELL_CHARS,
        exactTypes: true,
      });
      if (!p.ok) throw new Error(p.error);
      yield { columns: p.columns, rows: p.rows, total: p.total };
      offset += p.rows.length;
      if (p.rows.length < chunk || !p.pageable) return;
    }
  }
}

function activeFilters(filters: readonly ColumnFilter[]): ColumnFilter[] {
  return filters.filter((f) => f.text.trim() !== '');
}
