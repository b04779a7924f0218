// "Preview Table": the first 200 rows of a table or view, run through the sandbox pool (read-only, time-limited,
// killable) and shown in a webview with the shared result grid. One panel per table; previewing it again refreshes.
import * as vscode from 'vscode';
import { basename } from 'node:path';
import type { ExecResult } from '../../core/db/types';
import type { Services } from '../services';
import { webviewHtml, webviewOptions } from '../webviews/html';
import { preparePanel } from '../webviews/restore';
import { previewRestore } from '../../protocol/restore';
import { checkMessage } from '../../protocol/validate';
import {
  PREVIEW_RULES,
  previewMessageProblem,
  type PreviewData,
  type ToApp,
  type ToHost,
} from '../../protocol/preview';

export const PREVIEW_ROWS = 200;

/** What the command returns (for tests and callers): the result as run. */
export interface PreviewOutcome {
  db: string;
  table: string;
  result: ExecResult;
}

export class PreviewPanel {
  private static readonly open = new Map<string, PreviewPanel>();
  /** Set under tests: every message posted to a preview. */
  static testLog: { posted: ToApp[] } | undefined;
  private last: { result: ExecResult } | { error: string } | null = null;
  private running: Promise<PreviewOutcome> | null = null;
  private disposed = false;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly services: Services,
    readonly db: string,
    readonly table: string,
  ) {
    panel.onDidDispose(() => {
      this.disposed = true;
      PreviewPanel.open.delete(PreviewPanel.key(db, table));
    });
    panel.webview.onDidReceiveMessage((raw: unknown) => {
      void this.receive(raw);
    });
  }

  private static key(db: string, table: string): string {
    return `${db}\u0000${table}`;
  }

  /** Opens (or reveals and refreshes) the preview of `table` in `db`, and resolves once its query has run. */
  static show(
    context: vscode.ExtensionContext,
    services: Services,
    db: string,
    table: string,
  ): Promise<PreviewOutcome> {
    const key = PreviewPanel.key(db, table);
    let p = PreviewPanel.open.get(key);
    if (p) {
      p.panel.reveal(undefined, false);
    } else {
      const panel = vscode.window.createWebviewPanel(
        'quarry.preview',
        `${table} · ${basename(db)}`,
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        webviewOptions(context.extensionUri),
      );
      panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icons', 'quarry.svg');
      panel.webview.html = webviewHtml(panel.webview, context.extensionUri, 'preview', `Preview: ${table}`);
      p = new PreviewPanel(panel, services, db, table);
      PreviewPanel.open.set(key, p);
    }
    return p.load();
  }

  /**
   * The preview VS Code brings back after a window reload, with the state its app saved (database path and table): the
   * query runs again. A table already previewed elsewhere is revealed there instead. Returns why the state was not
   * used (the panel is then closed: there is nothing to show), or null.
   */
  static revive(
    panel: vscode.WebviewPanel,
    context: vscode.ExtensionContext,
    services: Services,
    state: unknown,
  ): string | null {
    const saved = previewRestore(state);
    if (!saved.ok) {
      panel.dispose();
      return saved.error;
    }
    const { path, table } = saved.value;
    const key = PreviewPanel.key(path, table);
    const existing = PreviewPanel.open.get(key);
    if (existing) {
      panel.dispose();
      existing.panel.reveal(undefined, false);
      return null;
    }
    preparePanel(panel, context.extensionUri);
    panel.title = `${table} · ${basename(path)}`;
    panel.webview.html = webviewHtml(panel.webview, context.extensionUri, 'preview', `Preview: ${table}`);
    const p = new PreviewPanel(panel, services, path, table);
    PreviewPanel.open.set(key, p);
    p.load().catch((err: unknown) => services.log.error(`preview of ${table}`, err));
    return null;
  }

  /** Closes every preview (tests). */
  static closeAll(): void {
    for (const p of [...PreviewPanel.open.values()]) p.panel.dispose();
  }

  private post(m: ToApp): void {
    if (this.disposed) return;
    PreviewPanel.testLog?.posted.push(m);
    void this.panel.webview.postMessage(m);
  }

  private load(): Promise<PreviewOutcome> {
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async run(): Promise<PreviewOutcome> {
    const dbName = basename(this.db);
    this.post({ type: 'loading', db: dbName, path: this.db, table: this.table });
    const { quoteIdent } = await import('../../core/db/schema/quote');
    const pool = await this.services.pool();
    const result = await pool.exec({
      db: this.db,
      sql: `SELECT * FROM ${quoteIdent(this.table)} LIMIT ${PREVIEW_ROWS}`,
      maxRows: PREVIEW_ROWS,
      timeoutMs: this.services.settings().query.timeoutMs,
    });
    if (result.ok) {
      this.last = { result };
      this.services.log.info(
        `preview: ${dbName} ${this.table}: ${result.rows.length} row(s) in ${Math.round(result.ms)} ms`,
      );
    } else {
      this.last = { error: result.error ?? 'the preview query failed' };
      this.services.log.warn(`preview: ${dbName} ${this.table}: ${result.error}`);
    }
    this.send();
    return { db: this.db, table: this.table, result };
  }

  /** Sends what was last run (the app asks again after being hidden and shown, since it keeps no copy). */
  private send(): void {
    const dbName = basename(this.db);
    if (!this.last) return;
    if ('error' in this.last) {
      this.post({ type: 'error', db: dbName, path: this.db, table: this.table, message: this.last.error });
      return;
    }
    void import('../../core/db/resultExport').then(({ wireRows }) => {
      if (!this.last || !('result' in this.last)) return;
      const r = this.last.result;
      const data: PreviewData = {
        db: dbName,
        path: this.db,
        table: this.table,
        columns: r.columns,
        rows: wireRows(r.rows),
        rowCount: r.rowCount,
        truncated: r.truncated,
        ms: r.ms,
      };
      this.post({ type: 'show', data });
    });
  }

  private async receive(raw: unknown): Promise<void> {
    const checked = checkMessage<ToHost>(raw, PREVIEW_RULES);
    const problem = checked.ok ? previewMessageProblem(checked.message) : checked.error;
    if (!checked.ok || problem) {
      this.services.log.warn(`preview: ignored a message from the webview: ${problem}`);
      return;
    }
    const m = checked.message;
    try {
      if (m.type === 'ready') {
        if (this.last) this.send();
        else if (this.running) this.post({ type: 'loading', db: basename(this.db), path: this.db, table: this.table });
      } else if (m.type === 'refresh') {
        await this.load();
      } else if (m.type === 'copyText') {
        await vscode.env.clipboard.writeText(m.text);
        void vscode.window.setStatusBarMessage('Quarry: rows copied', 2000);
      } else if (m.type === 'export' && this.last && 'result' in this.last) {
        const { exportResult } = await import('../ask/actions');
        const saved = await exportResult(
          this.last.result,
          m.format === 'csv' ? 'csv' : 'json',
          `${this.table}-preview`,
        );
        if (saved)
          void vscode.window.showInformationMessage(`Quarry: exported to ${vscode.workspace.asRelativePath(saved)}`);
      }
    } catch (err) {
      this.services.log.showError(`preview of ${this.table}`, err);
    }
  }
}
