// The Databases view: workspace SQLite files (checked by header) → tables and views (row counts) → columns (type,
// PK/FK). Files are found by quarry.databases.glob; their schemas are read through the sandbox pool (introspectViaPool)
// so a large database never blocks the extension host, and a slow count shows "rows: ?" instead of hanging the view.
import * as vscode from 'vscode';
import { basename, dirname } from 'node:path';
import { statSync } from 'node:fs';
import type { SchemaInfo, TableInfo, ColumnInfo } from '../../core/db/schema/types';
import type { Services } from '../services';
import { describeColumn, tableDescription } from './describe';
import { findWorkspaceFiles } from '../workspaceFiles';

export interface DatabaseNode {
  kind: 'database';
  path: string;
  uri: vscode.Uri;
}
export interface TableNode {
  kind: 'table';
  db: string;
  table: TableInfo;
}
interface ColumnNode {
  kind: 'column';
  db: string;
  table: TableInfo;
  column: ColumnInfo;
}
interface MessageNode {
  kind: 'message';
  id: string;
  text: string;
  detail?: string;
  icon: string;
}
export type DbTreeNode = DatabaseNode | TableNode | ColumnNode | MessageNode;

/** Budget for each row count; past it the count reads "rows: ?". */
const COUNT_TIMEOUT_MS = 3000;
const MAX_FILES = 2000;

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

export class DatabasesTree implements vscode.TreeDataProvider<DbTreeNode>, vscode.Disposable {
  // fire() with no argument refreshes the whole tree (the VS Code API's type, hence `void`).
  // biome-ignore lint/suspicious/noConfusingVoidType: the VS Code API's event type
  private readonly changed = new vscode.EventEmitter<DbTreeNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  private files: Promise<DatabaseNode[]> | null = null;
  private readonly schemas = new Map<string, Promise<SchemaInfo>>();
  /** Files matching the glob that are not SQLite, with why (shown as the view's message and in the log). */
  private rejected: { path: string; why: string }[] = [];
  onDidFindFiles?: (found: number, rejected: number) => void;

  constructor(private readonly services: Services) {}

  dispose(): void {
    this.changed.dispose();
  }

  /** Forgets everything (or one database's schema) and redraws. */
  refresh(dbPath?: string): void {
    if (dbPath === undefined) {
      this.files = null;
      this.schemas.clear();
      this.changed.fire();
      return;
    }
    this.schemas.delete(dbPath);
    this.files = null;
    this.changed.fire();
  }

  /** The databases the view lists now (discovering them if needed). */
  databases(): Promise<DatabaseNode[]> {
    this.files ??= this.discover();
    return this.files;
  }

  /** A database's schema as the view shows it (cached until a refresh or a change to the file). */
  schema(dbPath: string): Promise<SchemaInfo> {
    let p = this.schemas.get(dbPath);
    if (!p) {
      p = this.services.pool().then(async (pool) => {
        const { introspectViaPool } = await import('../../core/db/schema/viaPool');
        return introspectViaPool(pool, dbPath, { sampleRows: 0, countTimeoutMs: COUNT_TIMEOUT_MS });
      });
      // A failure is not cached: the next expand tries again (the file may have been fixed).
      p.catch(() => {
        if (this.schemas.get(dbPath) === p) this.schemas.delete(dbPath);
      });
      this.schemas.set(dbPath, p);
    }
    return p;
  }

  rejectedFiles(): readonly { path: string; why: string }[] {
    return this.rejected;
  }

  private async discover(): Promise<DatabaseNode[]> {
    const glob = this.services.settings().databases.glob;
    const uris = await findWorkspaceFiles(glob, MAX_FILES);
    const { assertSqliteFile } = await import('../../core/db/open');
    const found: DatabaseNode[] = [];
    const rejected: { path: string; why: string }[] = [];
    for (const uri of uris) {
      if (uri.scheme !== 'file') continue;
      try {
        // Reads 100 bytes: cheap enough inline, and it keeps text files named *.db out of the view.
        assertSqliteFile(uri.fsPath);
        found.push({ kind: 'database', path: uri.fsPath, uri });
      } catch (err) {
        rejected.push({ path: uri.fsPath, why: (err as Error).message });
      }
    }
    found.sort((a, b) => vscode.workspace.asRelativePath(a.uri).localeCompare(vscode.workspace.asRelativePath(b.uri)));
    for (const r of rejected)
      this.services.log.info(`databases: left out ${vscode.workspace.asRelativePath(r.path)}: ${r.why}`);
    this.rejected = rejected;
    this.onDidFindFiles?.(found.length, rejected.length);
    return found;
  }

  getTreeItem(node: DbTreeNode): vscode.TreeItem {
    switch (node.kind) {
      case 'database': {
        const item = new vscode.TreeItem(basename(node.path), vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `db:${node.path}`;
        item.resourceUri = node.uri;
        item.contextValue = 'quarry.database';
        item.iconPath = new vscode.ThemeIcon('database');
        const rel = vscode.workspace.asRelativePath(node.uri);
        const dir = dirname(rel);
        let size = '';
        try {
          size = sizeText(statSync(node.path).size);
        } catch {
          /* gone since discovery; the refresh will drop it */
        }
        item.description = [dir === '.' ? '' : dir, size].filter(Boolean).join(' · ');
        item.tooltip = `${rel}${size ? ` (${size})` : ''}\nRight-click: Ask, Show Schema, Copy DDL`;
        return item;
      }
      case 'table': {
        const t = node.table;
        const item = new vscode.TreeItem(
          t.name,
          t.columns.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
        );
        item.id = `table:${node.db}:${t.name}`;
        item.contextValue = 'quarry.table';
        item.iconPath = new vscode.ThemeIcon(t.kind === 'view' ? 'eye' : 'table');
        item.description = tableDescription(t);
        item.tooltip = `${t.kind} ${t.name}: ${t.columns.length} column(s), ${item.description}`;
        return item;
      }
      case 'column': {
        const view = describeColumn(node.column, node.table);
        const item = new vscode.TreeItem(node.column.name, vscode.TreeItemCollapsibleState.None);
        item.id = `column:${node.db}:${node.table.name}:${node.column.name}`;
        item.contextValue = 'quarry.column';
        item.iconPath = new vscode.ThemeIcon(
          view.role === 'pk' ? 'key' : view.role === 'fk' ? 'references' : 'symbol-field',
        );
        item.description = view.description;
        item.tooltip = view.tooltip;
        return item;
      }
      case 'message': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.iconPath = new vscode.ThemeIcon(node.icon);
        item.tooltip = node.detail ?? node.text;
        item.contextValue = 'quarry.message';
        return item;
      }
    }
  }

  async getChildren(node?: DbTreeNode): Promise<DbTreeNode[]> {
    if (!node) return this.databases();
    if (node.kind === 'database') {
      try {
        const info = await this.schema(node.path);
        if (info.tables.length === 0)
          return [{ kind: 'message', id: `empty:${node.path}`, text: 'no tables', icon: 'info' }];
        return info.tables.map((table) => ({ kind: 'table', db: node.path, table }));
      } catch (err) {
        const why = (err as Error).message;
        this.services.log.warn(`databases: cannot read ${vscode.workspace.asRelativePath(node.path)}: ${why}`);
        return [{ kind: 'message', id: `error:${node.path}`, text: `cannot read: ${why}`, detail: why, icon: 'error' }];
      }
    }
    if (node.kind === 'table')
      return node.table.columns.map((column) => ({ kind: 'column', db: node.db, table: node.table, column }));
    return [];
  }

  getParent(node: DbTreeNode): DbTreeNode | undefined {
    if (node.kind === 'table') return { kind: 'database', path: node.db, uri: vscode.Uri.file(node.db) };
    if (node.kind === 'column') return { kind: 'table', db: node.db, table: node.table };
    return undefined;
  }
}
