// Workspace Trust in the editor: the one gate every command that could start a process or reach a host goes through
// (requireTrust), the once-a-session notice when Quarry starts in an untrusted folder, and the event the features
// that were held back (following jobs) listen to so they start without a reload when the folder is trusted. The words
// and the decisions are trustPolicy.ts.
import * as vscode from 'vscode';
import type { Log } from './log';
import { type GatedFeature, refusalMessage, RESTRICTED_NOTICE, TRUST_ACTION, TRUST_COMMAND } from './trustPolicy';

const granted = new vscode.EventEmitter<void>();
/** Fires when the workspace becomes trusted (VS Code's onDidGrantWorkspaceTrust). */
export const onDidGrantTrust = granted.event;

let log: Log | undefined;
/** Test-only: trust as a test sets it (the editor tests run code-server with Workspace Trust disabled). */
let override: boolean | undefined;
/** Test-only: the features refused so far, in order. */
const refusals: GatedFeature[] = [];

/** Whether the workspace is trusted (always, when VS Code's Workspace Trust is off). */
export function isTrusted(): boolean {
  return override ?? vscode.workspace.isTrusted;
}

/** Offers the Workspace Trust editor with the message; does not wait for an answer. */
function offerTrust(show: typeof vscode.window.showWarningMessage, message: string): void {
  void Promise.resolve(show(message, TRUST_ACTION)).then((choice) => {
    if (choice === TRUST_ACTION) void vscode.commands.executeCommand(TRUST_COMMAND);
  });
}

/**
 * The gate: true in a trusted workspace; otherwise says why `feature` is off, with "Trust Folder…", and returns false
 * (the caller then does nothing).
 */
export function requireTrust(feature: GatedFeature): boolean {
  if (isTrusted()) return true;
  refusals.push(feature);
  const message = refusalMessage(feature);
  log?.info(`workspace trust: refused — ${message}`);
  offerTrust(vscode.window.showWarningMessage, message);
  return false;
}

/** Sets up the gate: the notice (once, when untrusted) and the grant event. Called first on activation. */
export function registerTrust(context: vscode.ExtensionContext, theLog: Log): void {
  log = theLog;
  context.subscriptions.push(
    granted,
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      log?.info('workspace trust: the folder is trusted now; training, jobs and checkpoints are on');
      granted.fire();
    }),
  );
  if (!isTrusted()) {
    log.info(`workspace trust: untrusted folder — ${RESTRICTED_NOTICE}`);
    offerTrust(vscode.window.showInformationMessage, RESTRICTED_NOTICE);
  }
  if (context.extensionMode === vscode.ExtensionMode.Test || process.env.QUARRY_TEST_HOOKS === '1') {
    context.subscriptions.push(
      vscode.commands.registerCommand('quarry.trust.testHook', (op: unknown) => {
        switch (op) {
          case 'untrust':
            override = false;
            return true;
          case 'grant':
            // As VS Code does when the user trusts the folder: trusted from now on, then the event.
            override = undefined;
            granted.fire();
            return true;
          case 'refusals':
            return [...refusals];
          default:
            throw new Error(`quarry.trust.testHook: unknown op ${JSON.stringify(op)}`);
        }
      }),
    );
  }
}
