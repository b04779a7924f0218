// The "Quarry" output channel. Everything written goes through redact(): API keys the extension has seen are masked,
// as are bearer tokens and key-shaped strings, so an error message quoting a request can never leak a key.
import * as vscode from 'vscode';
import { redact } from './redact';

export interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, err?: unknown): void;
  /** Logs the error and shows a notification with an "Open Log" action. */
  showError(message: string, err?: unknown): void;
  /** Secrets to mask from now on (the API keys read from SecretStorage). */
  addSecret(secret: string): void;
  show(): void;
  readonly channel: vscode.LogOutputChannel;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : String(err);
}

export function createLog(name = 'Quarry'): Log & vscode.Disposable {
  const channel = vscode.window.createOutputChannel(name, { log: true });
  const secrets = new Set<string>();
  const clean = (s: string): string => redact(s, secrets);
  return {
    channel,
    info: (m) => channel.info(clean(m)),
    warn: (m) => channel.warn(clean(m)),
    error(m, err) {
      channel.error(clean(err === undefined ? m : `${m}: ${errorText(err)}`));
      // Stacks help when something unexpected broke; ordinary failures (ModelError etc.) are said in one line.
      if (err instanceof Error && err.stack && !('kind' in err)) channel.debug(clean(err.stack));
    },
    showError(m, err) {
      this.error(m, err);
      const shown = clean(err === undefined ? m : `${m}: ${errorText(err)}`);
      void vscode.window.showErrorMessage(`Quarry: ${shown}`, 'Open Log').then((pick) => {
        if (pick === 'Open Log') channel.show(true);
      });
    },
    addSecret(secret) {
      if (secret.length >= 4) secrets.add(secret);
    },
    show: () => channel.show(true),
    dispose: () => channel.dispose(),
  };
}
