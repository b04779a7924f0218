// The Query Results panel: one webview (reused) showing the statement last run from a SQL document and its whole
// result, paged, sorted and filtered in SQLite through the sandbox pool (GridSession). The host keeps the session; the
// app asks for pages, so a hidden-and-shown panel gets its page again. After a window reload the panel comes back
// (its serializer, registered in index.ts) and runs the statement again on the page, sort and filters it showed.
import * as vscode from 'vscode';
import { basename } from 'node:path';
import type { Services } from '../services';
import type { PageOutcome } from '../../core/db/resultPages';
import { webviewHtml, webviewOptions } from '../webviews/html';
import { preparePanel } from '../webviews/restore';
import { checkMessage } from '../../protocol/validate';
import { resultsRestore } from '../../protocol/restore';
import { RESULTS_RULES, resultsMessageProblem, type GridView, type ToApp, type ToHost } from '../../protocol/results';
import { GridSession } from '../results/gridSession';
import { planFor } from '../results/plan';

export interface RunOutcome {
  db: string;
  sql: string;
  page: PageOutcome;
}

export class ResultsPanel {
  private static current: ResultsPanel | undefined;
  /** Set under tests: every message posted to the panel. */
  static testLog: { posted: ToApp[] } | undefined;
  private session: GridSession | null = null;
  private run: { db: string; sql: string } | null = null;
  private failure: { errorClass: string; message: string } | null = null;
  private disposed = false;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly services: Services,
    extensionUri: vscode.Uri,
  ) {
    panel.webview.html = webviewHtml(panel.webview, extensionUri, 'results', 'Query Results');
    panel.onDidDispose(() => {
      this.disposed = true;
      if (ResultsPanel.current === this) ResultsPanel.current = undefined;
    });
    panel.webview.onDidReceiveMessage((raw: unknown) => {
      void this.receive(raw);
    });
  }

  /** Runs `sql` on `db` and shows its first page in the panel (opened beside the editor the first time). */
  static async show(
    context: vscode.ExtensionContext,
    services: Services,
    db: string,
    sql: string,
  ): Promise<RunOutcome> {
    let p = ResultsPanel.current;
    if (!p) {
      const panel = vscode.window.createWebviewPanel(
        'quarry.results',
        'Query Results',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        webviewOptions(context.extensionUri),
      );
      panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icons', 'quarry.svg');
      p = new ResultsPanel(panel, services, context.extensionUri);
      ResultsPanel.current = p;
    } else {
      p.panel.reveal(undefined, true);
    }
    return p.execute(db, sql);
  }

  /**
   * The panel VS Code brings back after a window reload, with the state its app saved (statement, database, page):
   * the statement runs again on that page. A state that fails its checks closes the panel (there is nothing to show)
   * and says why. Resolves to why the state was not used, or null.
   */
  static async revive(
    panel: vscode.WebviewPanel,
    context: vscode.ExtensionContext,
    services: Services,
    state: unknown,
  ): Promise<string | null> {
    const saved = resultsRestore(state);
    if (!saved.ok) {
      panel.dispose();
      return saved.error;
    }
    ResultsPanel.current?.panel.dispose();
    preparePanel(panel, context.extensionUri);
    const p = new ResultsPanel(panel, services, context.extensionUri);
    ResultsPanel.current = p;
    const { path, sql, view } = saved.value;
    await p.execute(path, sql, view);
    return null;
  }

  /** Tests: hands `raw` to the open panel as if its app had sent it, and waits until it is handled. */
  static async deliver(raw: unknown): Promise<void> {
    await ResultsPanel.current?.receive(raw);
  }

  static close(): void {
    ResultsPanel.current?.panel.dispose();
  }

  private post(m: ToApp): void {
    if (this.disposed) return;
    ResultsPanel.testLog?.posted.push(m);
    void this.panel.webview.postMessage(m);
  }

  private async execute(db: string, sql: string, view: GridView | null = null): Promise<RunOutcome> {
    const info = { db: basename(db), path: db, sql };
    this.run = { db, sql };
    this.failure = null;
    this.panel.title = `Results · ${basename(db)}`;
    this.post({ type: 'running', ...info });
    const session = new GridSession(
      this.services,
      { db, sql, timeoutMs: this.services.settings().query.timeoutMs },
      (m) => this.post(m),
      'query-result',
    );
    this.session = session;
    const page = await session.load(
      view
        ? {
            offset: view.offset,
            limit: view.limit,
            order:
              view.sortColumn === undefined ? null : { column: view.sortColumn, descending: view.descending === true },
            filters: view.filters,
          }
        : {},
    );
    if (page.ok) this.post({ type: 'shown', ...info });
    else {
      this.failure = { errorClass: page.errorClass ?? 'error', message: page.error };
      this.post({ type: 'failed', ...info, ...this.failure });
    }
    return { db, sql, page };
  }

  private async receive(raw: unknown): Promise<void> {
    const checked = checkMessage<ToHost>(raw, RESULTS_RULES);
    const problem = checked.ok ? resultsMessageProblem(checked.message) : checked.error;
    if (!checked.ok || problem) {
      this.services.log.warn(`query results: ignored a message from the webview: ${problem}`);
      return;
    }
    const m = checked.message;
    try {
      if (m.type === 'ready') {
        if (!this.run) return;
        const info = { db: basename(this.run.db), path: this.run.db, sql: this.run.sql };
        if (this.failure) this.post({ type: 'failed', ...info, ...this.failure });
        else if (this.session) {
          this.post({ type: 'shown', ...info });
          await this.session.load();
        }
      } else if (m.type === 'rerun') {
        if (this.run) await this.execute(this.run.db, this.run.sql);
      } else if (m.type === 'plan') {
        const run = this.run;
        if (run) this.post({ type: 'plan', sql: run.sql, outcome: await planFor(this.services, run.db, run.sql) });
      } else {
        await this.session?.receive(m);
      }
    } catch (err) {
      this.services.log.showError('query results', err);
    }
  }
}
