// API keys live only in VS Code's SecretStorage (the OS keychain where there is one), one per server origin, so a key
// set for one server is never sent to another the user switches to. Never in settings, never in the log.
import type * as vscode from 'vscode';
import type { Log } from './log';

const PREFIX = 'quarry.apiKey:';

/** The key a base URL's secret is stored under: its origin (scheme, host, port), e.g. https://api.openai.com. */
export function apiKeyOrigin(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    return baseUrl.trim();
  }
}

export class ApiKeys {
  constructor(
    private readonly storage: vscode.SecretStorage,
    private readonly log: Log,
  ) {}

  async get(baseUrl: string): Promise<string | undefined> {
    const key = await this.storage.get(PREFIX + apiKeyOrigin(baseUrl));
    if (key) this.log.addSecret(key);
    return key || undefined;
  }

  async set(baseUrl: string, key: string): Promise<void> {
    const trimmed = key.trim();
    if (trimmed === '') throw new Error('the API key is empty');
    this.log.addSecret(trimmed);
    await this.storage.store(PREFIX + apiKeyOrigin(baseUrl), trimmed);
  }

  async clear(baseUrl: string): Promise<boolean> {
    const had = (await this.storage.get(PREFIX + apiKeyOrigin(baseUrl))) !== undefined;
    await this.storage.delete(PREFIX + apiKeyOrigin(baseUrl));
    return had;
  }

  /** Fires when any Quarry key changes (also from another window). */
  onDidChange(listener: () => void): vscode.Disposable {
    return this.storage.onDidChange((e) => {
      if (e.key.startsWith(PREFIX)) listener();
    });
  }
}
