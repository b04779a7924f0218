// The Databases view and its commands: Ask about this database (hands off to the Ask feature), Show Schema (in the
// prompt style the agent sees), Preview Table, Copy DDL (table or whole database), Refresh (also on file changes).
import * as vscode from 'vscode';
import { basename } from 'node:path';
import type { Services } from '../services';
import { pickSchemaStyle, showSchemaDocument } from '../showSchema';
import { DatabasesTree, type DbTreeNode } from './tree';
import { PreviewPanel, type PreviewOutcome } from '../preview/panel';
import { ddlCopiedText } from './describe';

/** What the view's commands accept: a tree node (menus), a database Uri, or { db, table? } (scripts and tests). */
type Target = DbTreeNode | vscode.Uri | { db: string; table?: string } | string | undefined;

interface Resolved {
  db: string;
  table?: string;
}

function resolve(arg: Target, view: vscode.TreeView<DbTreeNode>): Resolved | undefined {
  const a = arg ?? view.selection[0];
  if (!a) return undefined;
  if (typeof a === 'string') return { db: a };
  if (a instanceof vscode.Uri) return { db: a.fsPath };
  if ('kind' in a) {
    if (a.kind === 'database') return { db: a.path };
    if (a.kind === 'table' || a.kind === 'column') return { db: a.db, table: a.table.name };
    return undefined;
  }
  if (typeof a.db === 'string') return { db: a.db, table: typeof a.table === 'string' ? a.table : undefined };
  return undefined;
}

/** Debounces bursts of file events (a database being written fires many). */
function debounced(ms: number, f: () => void): { run: () => void; dispose: () => void } {
  let t: NodeJS.Timeout | undefined;
  return {
    run: () => {
      clearTimeout(t);
      t = setTimeout(f, ms);
    },
    dispose: () => clearTimeout(t),
  };
}

export interface DatabasesFeature {
  tree: DatabasesTree;
  view: vscode.TreeView<DbTreeNode>;
}

export function register(context: vscode.ExtensionContext, services: Services): DatabasesFeature {
  const tree = new DatabasesTree(services);
  const view = vscode.window.createTreeView('quarry.databases', { treeDataProvider: tree, showCollapseAll: true });
  tree.onDidFindFiles = (_found, rejected) => {
    view.message =
      rejected > 0
        ? `${rejected} file${rejected === 1 ? '' : 's'} matching ${services.settings().databases.glob} ` +
          `${rejected === 1 ? 'is' : 'are'} not SQLite and ${rejected === 1 ? 'is' : 'are'} left out ` +
          '(see Quarry: Show Log).'
        : undefined;
  };

  // File events: the changed database's schema is read again; creations and deletions change the list.
  const dirty = new Set<string>();
  let listChanged = false;
  const flush = debounced(400, () => {
    if (listChanged) tree.refresh();
    else for (const p of dirty) tree.refresh(p);
    dirty.clear();
    listChanged = false;
  });
  let watcher: vscode.FileSystemWatcher | undefined;
  const watch = (): void => {
    watcher?.dispose();
    watcher = vscode.workspace.createFileSystemWatcher(services.settings().databases.glob);
    watcher.onDidCreate(() => {
      listChanged = true;
      flush.run();
    });
    watcher.onDidDelete(() => {
      listChanged = true;
      flush.run();
    });
    watcher.onDidChange((uri) => {
      dirty.add(uri.fsPath);
      flush.run();
    });
  };
  watch();

  const need = (arg: Target, what: string): Resolved | undefined => {
    const r = resolve(arg, view);
    if (!r) void vscode.window.showInformationMessage(`Quarry: choose a ${what} in the Databases view first.`);
    return r;
  };

  context.subscriptions.push(
    tree,
    view,
    flush,
    { dispose: () => watcher?.dispose() },
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('quarry.databases.glob')) {
        watch();
        tree.refresh();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => tree.refresh()),

    vscode.commands.registerCommand('quarry.refreshDatabases', async () => {
      tree.refresh();
      // Resolves once the list is rediscovered, so callers (and tests) can rely on it.
      return (await tree.databases()).map((d) => d.path);
    }),

    vscode.commands.registerCommand('quarry.askAboutDatabase', async (arg: Target) => {
      const t = need(arg, 'database');
      if (!t) return;
      if (!services.ask) {
        void vscode.window.showWarningMessage(
          'Quarry: the Ask feature is not available in this build, so there is nothing to hand the database to.',
        );
        return;
      }
      services.log.info(`databases: ask about ${vscode.workspace.asRelativePath(t.db)}`);
      await services.ask(t.db);
    }),

    vscode.commands.registerCommand('quarry.showSchemaOf', async (arg: Target, style?: unknown) => {
      const t = need(arg, 'database');
      if (!t) return undefined;
      const chosen = style === 'list' || style === 'ddl' || style === 'names' ? style : await pickSchemaStyle();
      return showSchemaDocument(services, t.db, chosen);
    }),

    vscode.commands.registerCommand('quarry.previewTable', async (arg: Target): Promise<PreviewOutcome | undefined> => {
      const t = need(arg, 'table');
      if (!t) return undefined;
      if (!t.table) {
        void vscode.window.showInformationMessage(
          'Quarry: Preview Table works on a table; expand the database and pick one.',
        );
        return undefined;
      }
      try {
        return await PreviewPanel.show(context, services, t.db, t.table);
      } catch (err) {
        services.log.showError(`cannot preview ${t.table}`, err);
        return undefined;
      }
    }),

    vscode.commands.registerCommand('quarry.copyDdl', async (arg: Target) => {
      const t = need(arg, 'database or table');
      if (!t) return undefined;
      try {
        const [{ DDL_CATALOG_SQL, catalogEntries, formatDdl }, pool] = await Promise.all([
          import('../../core/db/schema/ddl'),
          services.pool(),
        ]);
        const r = await pool.exec({
          db: t.db,
          sql: DDL_CATALOG_SQL,
          maxRows: Infinity,
          maxCellChars: 10_000_000,
          timeoutMs: services.settings().query.timeoutMs,
        });
        if (!r.ok) throw new Error(r.error ?? 'reading the catalog failed');
        const script = formatDdl(catalogEntries(r.rows), t.table);
        await vscode.env.clipboard.writeText(script);
        const what = t.table ? `DDL of ${t.table}` : `DDL of ${basename(t.db)}`;
        const said = ddlCopiedText(what, script);
        void vscode.window.showInformationMessage(`Quarry: ${said}`);
        services.log.info(`databases: ${said} (${script.length} characters)`);
        return script;
      } catch (err) {
        services.log.showError(`cannot copy the DDL of ${t.table ?? basename(t.db)}`, err);
        return undefined;
      }
    }),
  );
  // After a window reload a preview comes back on its table and runs its query again.
  PreviewPanel.register(context, services);
  return { tree, view };
}
