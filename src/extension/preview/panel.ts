// "Preview Table": the whole of a table or view, a page at a time, run through the sandbox pool (read-only,
// time-limited, killable) and shown in a webview with the shared paged grid; sorting and filters run in SQLite over
// the whole table. One panel per table; previewing it again refreshes.
import type * as vscode from 'vscode';
import { basename } from 'node:path';
import type { PageOutcome } from '../../core/db/resultPages';
import type { Services } from '../services';
import { PanelController, registerPanel } from '../webviews/kit';
import { previewMessageProblem, type ToApp, type ToHost } from '../../protocol/preview';
import { GridSession } from '../results/gridSession';
import { PREVIEW } from './registration';

/** What the command returns (for tests and callers): the first page as run. */
export interface PreviewOutcome {
  db: string;
  table: string;
  page: PageOutcome;
}

const key = (db: string, table: string): string => `${db}\u0000${table}`;
const title = (db: string, table: string): string => `${table} · ${basename(db)}`;

export class PreviewPanel {
  private static readonly open = new Map<string, PreviewPanel>();
  private session: GridSession | null = null;
  private error: string | null = null;
  private running: Promise<PreviewOutcome> | null = null;

  private constructor(
    private readonly view: PanelController<ToHost, ToApp>,
    private readonly services: Services,
    readonly db: string,
    readonly table: string,
  ) {
    PreviewPanel.open.set(view.key, this);
    view.bind({
      problem: previewMessageProblem,
      receive: (m) => this.receive(m),
      onDispose: () => {
        if (PreviewPanel.open.get(view.key) === this) PreviewPanel.open.delete(view.key);
      },
    });
  }

  /** Opens (or reveals and refreshes) the preview of `table` in `db`, and resolves once its query has run. */
  static show(
    context: vscode.ExtensionContext,
    services: Services,
    db: string,
    table: string,
  ): Promise<PreviewOutcome> {
    let p = PreviewPanel.open.get(key(db, table));
    if (p) p.view.reveal();
    else {
      const view = PanelController.create<ToHost, ToApp>(context, services, PREVIEW, {
        key: key(db, table),
        title: title(db, table),
      });
      p = new PreviewPanel(view, services, db, table);
    }
    return p.load();
  }

  /**
   * Registers the preview with the kit: after a window reload it comes back on the table its app saved (database
   * path and table) and runs the query again; a table already previewed elsewhere is revealed there instead. An
   * unusable state closes the panel (there is nothing to show).
   */
  static register(context: vscode.ExtensionContext, services: Services): void {
    registerPanel(context, services, PREVIEW, async (panel, saved) => {
      if (!saved.ok) {
        panel.dispose();
        return saved.error;
      }
      const { path, table } = saved.value;
      const existing = PreviewPanel.open.get(key(path, table));
      if (existing) {
        panel.dispose();
        existing.view.reveal();
        return null;
      }
      const view = PanelController.adopt<ToHost, ToApp>(context, services, PREVIEW, panel, {
        key: key(path, table),
        title: title(path, table),
      });
      new PreviewPanel(view, services, path, table)
        .load()
        .catch((err: unknown) => services.log.error(`preview of ${table}`, err));
      return null;
    });
  }

  private post(m: ToApp): void {
    this.view.post(m);
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

  private async receive(m: ToHost): Promise<void> {
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
