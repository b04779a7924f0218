// Completion items of a bound SQL document: the schema's names that fit the cursor's context (completionContext in
// core: tables after FROM/JOIN, `alias.` → that table's columns), as VS Code items.
import * as vscode from 'vscode';
import type { SchemaInfo } from '../../core/db/schema/types';
import { completionEntries, type CompletionContext } from '../../core/sql/completionContext';

export function completionItems(schema: SchemaInfo, ctx: CompletionContext): vscode.CompletionItem[] {
  return completionEntries(schema, ctx).map((e) => {
    const item =
      e.kind === 'column'
        ? new vscode.CompletionItem({ label: e.label, description: e.table }, vscode.CompletionItemKind.Field)
        : new vscode.CompletionItem(e.label, vscode.CompletionItemKind.Class);
    item.detail = e.detail;
    if (e.documentation !== undefined) item.documentation = e.documentation;
    item.sortText = e.sortText;
    if (e.kind === 'column') item.insertText = e.label;
    return item;
  });
}
