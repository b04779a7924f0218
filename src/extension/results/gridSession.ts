// The host half of a paged result grid: answers the app's page requests with pages of the whole result run through
// the sandbox pool (ResultPages), and exports the whole result (sorted and filtered as shown) chunk by chunk to a
// file, with progress in the grid and in a notification, either of which can cancel it.
import * as vscode from 'vscode';
import { open } from 'node:fs/promises';
import type { Services } from '../services';
import { ResultPages, type PageOutcome, type ResultSource } from '../../core/db/resultPages';
import type { PageSpec } from '../../core/db/pagedQuery';
import { EXPORT_EXTENSIONS, ExportText, wireRows, type ExportFormat } from '../../core/db/resultExport';
import { formatCount } from '../../core/util/countText';
import { checkMessage } from '../../protocol/validate';
import { GRID_RULES, gridMessageProblem, type GridToApp, type GridToHost, type WirePage } from '../../protocol/grid';

/** Rows per export chunk: each chunk is one sandboxed query. */
const EXPORT_CHUNK = 5000;
const DEFAULT_PAGE_ROWS = 200;

export class GridSession {
  private spec: PageSpec = { offset: 0, limit: DEFAULT_PAGE_ROWS, order: null, filters: [] };
  private exporting: AbortController | null = null;
  /** Set under tests: every page outcome, in order. */
  static testLog: { outcomes: PageOutcome[] } | undefined;

  constructor(
    private readonly services: Services,
    private readonly source: ResultSource,
    private readonly post: (m: GridToApp) => void,
    /** File name (without extension) an export proposes. */
    private readonly exportName: string,
  ) {}

  /** Whether `raw` is a grid message; if so it is handled (the caller passes the rest on). */
  static isGridMessage(raw: unknown): boolean {
    const t = (raw as { type?: unknown } | null)?.type;
    return typeof t === 'string' && Object.hasOwn(GRID_RULES, t);
  }

  /** Runs the page the app shows now (the first, or the one it last asked for) and posts it. */
  async load(spec: Partial<PageSpec> = {}): Promise<PageOutcome> {
    this.spec = { ...this.spec, ...spec };
    const pages = await this.pagesNow();
    const outcome = await pages.page(this.spec);
    GridSession.testLog?.outcomes.push(outcome);
    if (!outcome.ok) {
      this.post({ type: 'pageError', message: `${outcome.errorClass ?? 'error'}: ${outcome.error}` });
      return outcome;
    }
    const page: WirePage = {
      columns: outcome.columns,
      rows: wireRows(outcome.rows),
      realColumns: outcome.realColumns,
      offset: outcome.offset,
      limit: this.spec.limit,
      total: outcome.total,
      pageable: outcome.pageable,
      sortColumn: this.spec.order?.column ?? null,
      descending: this.spec.order?.descending ?? false,
      filters: this.spec.filters,
      notes: outcome.notes,
      ms: outcome.ms,
    };
    this.post({ type: 'page', page });
    return outcome;
  }

  private pages: ResultPages | null = null;
  private async pagesNow(): Promise<ResultPages> {
    this.pages ??= new ResultPages(await this.services.pool(), this.source);
    return this.pages;
  }

  /** Handles one grid message from the app (checked here); returns false when it is not a grid message. */
  async receive(raw: unknown): Promise<boolean> {
    if (!GridSession.isGridMessage(raw)) return false;
    const checked = checkMessage<GridToHost>(raw, GRID_RULES);
    const problem = checked.ok ? gridMessageProblem(checked.message) : checked.error;
    if (!checked.ok || problem) {
      this.services.log.warn(`result grid: ignored a message from the webview: ${problem}`);
      return true;
    }
    const m = checked.message;
    if (m.type === 'page') {
      await this.load({
        offset: m.offset,
        limit: m.limit,
        order: m.sortColumn === undefined ? null : { column: m.sortColumn, descending: m.descending === true },
        filters: m.filters,
      });
    } else if (m.type === 'copyText') {
      await vscode.env.clipboard.writeText(m.text);
      void vscode.window.setStatusBarMessage('Quarry: rows copied', 2000);
    } else if (m.type === 'cancelExport') {
      this.exporting?.abort();
    } else if (m.type === 'export') {
      await this.exportWhole(m.format as ExportFormat);
    }
    return true;
  }

  /** Exports every row of the result, sorted and filtered as the grid shows it. Resolves with the path, if saved. */
  async exportWhole(format: ExportFormat, target?: vscode.Uri): Promise<string | undefined> {
    if (this.exporting) {
      void vscode.window.showWarningMessage('Quarry: an export of this result is already running.');
      return undefined;
    }
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const ext = EXPORT_EXTENSIONS[format];
    const uri =
      target ??
      (await vscode.window.showSaveDialog({
        title: `Export the whole result as ${format === 'markdown' ? 'Markdown' : format.toUpperCase()}`,
        defaultUri: folder ? vscode.Uri.joinPath(folder, `${this.exportName}.${ext}`) : undefined,
        filters: { [format === 'markdown' ? 'Markdown' : format.toUpperCase()]: [ext] },
        saveLabel: 'Export',
      }));
    if (!uri) return undefined;
    const abort = new AbortController();
    this.exporting = abort;
    const pages = await this.pagesNow();
    let done = 0;
    let total: number | null = null;
    const file = await open(uri.fsPath, 'w');
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Quarry: exporting', cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          let text: ExportText | null = null;
          for await (const chunk of pages.allRows(this.spec.order, this.spec.filters, EXPORT_CHUNK, abort.signal)) {
            total ??= chunk.total;
            text ??= new ExportText(format, chunk.columns);
            await file.write(text.chunk(chunk.rows));
            done += chunk.rows.length;
            const of = total === null ? '' : ` of ${formatCount(total)}`;
            progress.report({
              message: `${formatCount(done)}${of} rows`,
              increment: total ? (chunk.rows.length / total) * 100 : undefined,
            });
            this.post({ type: 'exportProgress', done, total, finished: false });
            if (abort.signal.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError' });
          }
          if (text) await file.write(text.end());
        },
      );
      await file.close();
      const message = `exported ${formatCount(done)} rows to ${vscode.workspace.asRelativePath(uri)}`;
      this.post({ type: 'exportProgress', done, total, finished: true, message });
      void vscode.window.showInformationMessage(`Quarry: ${message}`);
      return uri.fsPath;
    } catch (err) {
      await file.close().catch(() => undefined);
      const cancelled = (err as Error).name === 'AbortError' || abort.signal.aborted;
      const message = cancelled
        ? `export cancelled after ${formatCount(done)} rows (the file holds only those)`
        : `export failed: ${(err as Error).message}`;
      this.post({ type: 'exportProgress', done, total, finished: true, message });
      if (cancelled) void vscode.window.showWarningMessage(`Quarry: ${message}`);
      else this.services.log.showError('export', err);
      return undefined;
    } finally {
      this.exporting = null;
    }
  }
}
