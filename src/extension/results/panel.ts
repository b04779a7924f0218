// The Query Results panel: one webview (reused) showing the statement last run from a SQL document and its whole
// result, paged, sorted and filtered in SQLite through the sandbox pool (GridSession). The host keeps the session; the
// app asks for pages, so a hidden-and-shown panel gets its page again. After a window reload the panel comes back
// (register) and runs the statement again on the page, sort and filters it showed.
import type * as vscode from 'vscode';
import { basename } from 'node:path';
import type { Services } from '../services';
import type { PageOutcome } from '../../core/db/resultPages';
import { PanelController, registerPanel } from '../webviews/kit';
import { resultsMessageProblem, type GridView, type ToApp, type ToHost } from '../../protocol/results';
import { GridSession } from './gridSession';
import { planFor } from './plan';
import { RESULTS } from './registration';

export interface RunOutcome {
  db: string;
  sql: string;
  page: PageOutcome;
}

export class ResultsPanel {
  private static current: ResultsPanel | undefined;
  private session: GridSession | null = null;
  private run: { db: string; sql: string } | null = null;
  private failure: { errorClass: string; message: string } | null = null;

  private constructor(
    private readonly view: PanelController<ToHost, ToApp>,
    private readonly services: Services,
  ) {
    ResultsPanel.current = this;
    view.bind({
      problem: resultsMessageProblem,
      receive: (m) => this.receive(m),
      onDispose: () => {
        if (ResultsPanel.current === this) ResultsPanel.current = undefined;
      },
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
    if (p) p.view.reveal(true);
    else p = new ResultsPanel(PanelController.create(context, services, RESULTS), services);
    return p.execute(db, sql);
  }

  /**
   * Registers the panel with the kit: after a window reload VS Code brings it back with the state its app saved
   * (statement, database, page), and the statement runs again on that page (the panel open before, if any, closes).
   * A state that fails its checks closes the panel (there is nothing to show).
   */
  static register(context: vscode.ExtensionContext, services: Services): void {
    registerPanel(context, services, RESULTS, async (panel, saved) => {
      if (!saved.ok) {
        panel.dispose();
        return saved.error;
      }
      const p = new ResultsPanel(PanelController.adopt(context, services, RESULTS, panel), services);
      const { path, sql, view } = saved.value;
      await p.execute(path, sql, view);
      return null;
    });
  }

  private post(m: ToApp): void {
    this.view.post(m);
  }

  private async execute(db: string, sql: string, view: GridView | null = null): Promise<RunOutcome> {
    const info = { db: basename(db), path: db, sql };
    this.run = { db, sql };
    this.failure = null;
    this.view.title = `Results · ${basename(db)}`;
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

  /** Acts on a message the kit checked (a failure is shown by the kit). */
  private async receive(m: ToHost): Promise<void> {
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
  }
}
