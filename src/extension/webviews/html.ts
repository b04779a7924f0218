// One place that builds a webview's HTML, so every panel gets the same strict Content-Security-Policy (scripts only
// with this page's nonce, no inline styles from elsewhere, no remote loads) and the same resource roots.
import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';

/** The folders a webview may load from: the bundled apps and the extension's media. Nothing from the workspace. */
function webviewRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')];
}

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return { enableScripts: true, localResourceRoots: webviewRoots(extensionUri), retainContextWhenHidden: false };
}

/** `app` names the bundle dist/webview/<app>.js (built from webview/<app>/main.ts). */
export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, app: string, title: string): string {
  const nonce = randomBytes(16).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', `${app}.js`));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'webview.css'));
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `style-src ${webview.cspSource} 'unsafe-inline'`, // the toolkit's web components inject their own styles
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>${escapeHtml(title)}</title>
</head>
<body>
<div id="app" data-app="${escapeHtml(app)}"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
