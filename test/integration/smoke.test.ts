// Smoke tests in a real extension host: the extension activates in the sample workspace (test/workspace, built by the
// runner), every command the manifest contributes has a handler, and the native SQLite addon the extension ships
// loads in this host's Node and reads the workspace's databases.
import * as assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';

const EXTENSION_ID = 'quarry.quarry';

interface Manifest {
  contributes: { commands: { command: string }[]; views: Record<string, { id: string }[]> };
}

function extension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not installed in this extension host`);
  return ext;
}

suite('smoke: the extension in a real VS Code', () => {
  test('the workspace is the sample workspace with its databases', async () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(folders.length, 1, 'one workspace folder is open');
    const found = await vscode.workspace.findFiles('**/*.{sqlite,sqlite3,db}', '**/node_modules/**');
    const names = found.map((u) => vscode.workspace.asRelativePath(u)).sort();
    for (const db of ['archive/weather.sqlite', 'data/clinic.sqlite', 'data/orchard.sqlite']) {
      assert.ok(names.includes(db), `${db} in ${names.join(', ')}`);
    }
  });

  test('the extension activates', async () => {
    const ext = extension();
    await ext.activate();
    assert.equal(ext.isActive, true);
  });

  test('every contributed command has a handler after activation', async () => {
    const ext = extension();
    await ext.activate();
    const manifest = ext.packageJSON as Manifest;
    const contributed = manifest.contributes.commands.map((c) => c.command);
    assert.ok(contributed.length > 0, 'the manifest contributes commands');
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.filter((c) => !registered.has(c));
    assert.deepEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
  });

  test('the shipped better-sqlite3 loads in this extension host and reads a workspace database', () => {
    const ext = extension();
    // Loaded from the extension's own folder, as the extension does: the addon must match this host's Node ABI.
    const req = createRequire(join(ext.extensionPath, 'package.json'));
    const Database = req('better-sqlite3') as typeof import('better-sqlite3');
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const db = new Database(join(folder, 'data', 'clinic.sqlite'), { readonly: true });
    try {
      const row = db.prepare('SELECT COUNT(*) AS n, MIN(name) AS first FROM doctor').get() as {
        n: number;
        first: string;
      };
      assert.deepEqual(row, { n: 3, first: 'Amara Okafor' });
    } finally {
      db.close();
    }
  });

  test('"Quarry: Show Log" runs', async () => {
    await extension().activate();
    await vscode.commands.executeCommand('quarry.showLog');
  });
});
