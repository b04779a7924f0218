// "Preview Table": the whole of a table or view, a page at a time, run through the sandbox pool (read-only,
// time-limited, killable) and shown in a webview with the shared paged grid; sorting and filters run in SQLite over
// the whole table. One panel per table; previewing it again refreshes.
import * as vscode from 'vscode';
import { basename } from 'node:path';
import type { PageOutcome } from '../../core/db/resultPages';
import type { Services } from '../services';
import { webviewHtml, webviewOptions } from '../webviews/html';
import { preparePanel } from '../webviews/restore';
import { previewRestore } from '../../protocol/restore';
import { checkMessage } from '../../protocol/validate';
import { PREVIEW_RULES, previewMessageProblem, type ToApp, type ToHost } from '../../protocol/preview';
import { GridSession } from '../results/gridSession';

/** What the command returns (for tests and callers): the first page as run. */
export interface PreviewOutcome {
  db: string;
  table: string;
  page: PageOutcome;
}

export class PreviewPanel {
  private static readonly open = new Map<string, PreviewPanel>();
  /** Set under tests: every message posted to a preview. */
  static testLog: { posted: ToApp[] } | undefined;
  private session: GridSession | null = null;
  private error: string | null = null;
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

  /** Tests: hands `raw` to every open preview as if its app had sent it, and waits until each has handled it. */
  static async deliver(raw: unknown): Promise<void> {
    await Promise.all([...PreviewPanel.open.values()].map((p) => p.receive(raw)));
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
    const session = new GridSession(
      this.services,
      {
        db: this.db,
        sql: `SELECT * FROM ${quoteIdent(this.table)}`,
        timeoutMs: this.services.settings().query.timeoutMs,
      },
      (m) => this.post(m),
      `${this.table}`,
    );
    this.session = session;
    this.error = null;
    const page = await session.load();
    if (page.ok) {
      this.post({ type: 'shown', db: dbName, path: this.db, table: this.table });
      this.services.log.info(
        `preview: ${dbName} ${this.table}: rows 1–${page.rows.length} of ${page.total ?? '?'} ` +
          `in ${Math.round(page.ms)} ms`,
      );
    } else {
      this.error = page.error;
      this.post({ type: 'error', db: dbName, path: this.db, table: this.table, message: page.error });
      this.services.log.warn(`preview: ${dbName} ${this.table}: ${page.error}`);
    }
    return { db: this.db, table: this.table, page };
  }

  private async receive(raw: unknown): Promise<void> {
    const checked = checkMessage<ToHost>(raw, PREVIEW_RULES);
    const problem = checked.ok ? previewMessageProblem(checked.message) : checked.error;
    if (!checked.ok || problem) {
      this.services.log.warn(`preview: ignored a message from the webview: ${problem}`);
      return;
    }
    const m = checked.message;
    const target = { db: basename(this.db), path: this.db, table: this.table };
    try {
      if (m.type === 'ready') {
        // The app keeps no rows: after being hidden and shown it gets the page it showed, run again.
        if (this.running) this.post({ type: 'loading', ...target });
        else if (this.error !== null) this.post({ type: 'error', ...target, message: this.error });
        else if (this.session) await this.session.load();
      } else if (m.type === 'refresh') {
        await this.load();
      } else {
        await this.session?.receive(m);
      }
    } catch (err) {
      this.services.log.showError(`preview of ${this.table}`, err);
    }
  }
}
