// The one panel kit every Quarry webview is built from. A panel is a `PanelKind` (its registration: one name shared
// by the view type `quarry.<name>`, the app bundle webview/<name>/main.ts, the wire types src/protocol/<name>.ts
// and the test hook `quarry.<name>.testHook`; the message rules; the saved-state check) plus its own logic. The kit
// owns the rest, once: creating the VS Code panel with the strict HTML and icon, keeping track of the open ones by
// key, checking every message against the protocol before the logic sees it, posting (and recording posts under
// tests), bringing panels back after a window reload through a WebviewPanelSerializer, and the test hook.
import * as vscode from 'vscode';
import type { Services } from '../services';
import { checkMessage, type MessageRules } from '../../protocol/validate';
import type { Parsed } from '../../protocol/restore';
import { webviewHtml, webviewOptions } from './html';

type Message = { type: string };

/** A panel's registration: everything about it that is data, not behaviour. */
export interface PanelKind<ToHost extends Message, Saved = unknown> {
  /** The one name: view type `quarry.<name>`, bundle dist/webview/<name>.js, hook `quarry.<name>.testHook`. */
  name: string;
  /** What a new panel's tab says before its logic names it. */
  title: string;
  /** The fields each message type from the app must carry (src/protocol/<name>.ts). */
  rules: MessageRules<ToHost>;
  /** Checks the state the app saved, before a panel is brought back after a reload (src/protocol/restore.ts). */
  restore: (state: unknown) => Parsed<Saved>;
  /** Where a new panel opens (default: the active column). */
  column?: vscode.ViewColumn;
  /** Leave the focus where it was when a new panel opens (default false: the panel takes it). */
  preserveFocus?: boolean;
  /** Keep the app alive while hidden (default false: the host keeps the state and the app asks for it again). */
  retainContextWhenHidden?: boolean;
}

/** What a panel's own logic gives the kit. */
interface PanelLogic<ToHost extends Message> {
  /** Why a message that passed the rules is still refused (it names something the panel does not show), or null. */
  problem?(message: ToHost): string | null;
  /** Acts on a checked message. */
  receive(message: ToHost): void | Promise<void>;
  /** A message from the app was refused (said in the log already); a panel that shows refusals says so here. */
  onRefused?(why: string): void;
  /** The panel was closed (by the user, a test or the host). */
  onDispose?(): void;
}

/** What a test sees of a kind of panel (recorded only when test hooks are on). */
interface PanelTestLog {
  posted: unknown[];
  rejected: string[];
  /** Types of the messages the real app sent (not those the test hook handed in). */
  fromWebview: string[];
}

const testLogs = new Map<string, PanelTestLog>();

export function testHooksOn(context: vscode.ExtensionContext): boolean {
  return context.extensionMode === vscode.ExtensionMode.Test || process.env.QUARRY_TEST_HOOKS === '1';
}

/** One open panel of a kind: the VS Code panel, its key among the open ones, and the way messages go in and out. */
export class PanelController<ToHost extends Message, ToApp extends Message> {
  private static readonly open = new Map<string, Map<string, PanelController<Message, Message>>>();
  private logic: PanelLogic<ToHost> | null = null;
  private closed = false;

  private constructor(
    readonly kind: PanelKind<ToHost, unknown>,
    readonly panel: vscode.WebviewPanel,
    readonly services: Services,
    readonly key: string,
  ) {
    const open = PanelController.openOf(kind.name);
    open.get(key)?.dispose();
    open.set(key, this as unknown as PanelController<Message, Message>);
    panel.onDidDispose(() => {
      this.closed = true;
      if (open.get(key) === (this as unknown)) open.delete(key);
      this.logic?.onDispose?.();
    });
    panel.webview.onDidReceiveMessage((raw: unknown) => {
      testLogs.get(kind.name)?.fromWebview.push(String((raw as { type?: unknown } | null)?.type));
      void this.deliver(raw);
    });
  }

  private static openOf(name: string): Map<string, PanelController<Message, Message>> {
    let m = PanelController.open.get(name);
    if (!m) PanelController.open.set(name, (m = new Map()));
    return m;
  }

  /** The open panel of `kind` under `key` (default ''), if any. */
  static find<ToHost extends Message, ToApp extends Message>(
    kind: PanelKind<ToHost, unknown>,
    key = '',
  ): PanelController<ToHost, ToApp> | undefined {
    return PanelController.openOf(kind.name).get(key) as PanelController<ToHost, ToApp> | undefined;
  }

  /** Every open panel of `kind`. */
  static all(kind: { name: string }): PanelController<Message, Message>[] {
    return [...PanelController.openOf(kind.name).values()];
  }

  /** A new panel of `kind` under `key`, with the strict HTML and the Quarry icon (a panel open under `key` closes). */
  static create<ToHost extends Message, ToApp extends Message>(
    context: vscode.ExtensionContext,
    services: Services,
    kind: PanelKind<ToHost, unknown>,
    opts: { key?: string; title?: string } = {},
  ): PanelController<ToHost, ToApp> {
    const panel = vscode.window.createWebviewPanel(
      `quarry.${kind.name}`,
      opts.title ?? kind.title,
      { viewColumn: kind.column ?? vscode.ViewColumn.Active, preserveFocus: kind.preserveFocus ?? false },
      { ...webviewOptions(context.extensionUri), retainContextWhenHidden: kind.retainContextWhenHidden ?? false },
    );
    return PanelController.adopt(context, services, kind, panel, opts);
  }

  /** Takes a panel VS Code made (after a reload, or a test's): options, icon, HTML, and a place among the open ones. */
  static adopt<ToHost extends Message, ToApp extends Message>(
    context: vscode.ExtensionContext,
    services: Services,
    kind: PanelKind<ToHost, unknown>,
    panel: vscode.WebviewPanel,
    opts: { key?: string; title?: string } = {},
  ): PanelController<ToHost, ToApp> {
    panel.webview.options = webviewOptions(context.extensionUri);
    panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icons', 'quarry.svg');
    if (opts.title) panel.title = opts.title;
    panel.webview.html = webviewHtml(panel.webview, context.extensionUri, kind.name, opts.title ?? kind.title);
    return new PanelController<ToHost, ToApp>(kind, panel, services, opts.key ?? '');
  }

  /** Hands the panel its logic; messages that arrive before are checked and dropped (the app says `ready` again). */
  bind(logic: PanelLogic<ToHost>): this {
    this.logic = logic;
    return this;
  }

  get disposed(): boolean {
    return this.closed;
  }

  set title(title: string) {
    if (!this.closed) this.panel.title = title;
  }

  reveal(preserveFocus = false): void {
    if (!this.closed) this.panel.reveal(undefined, preserveFocus);
  }

  dispose(): void {
    if (!this.closed) this.panel.dispose();
  }

  /** Sends a message to the app (nothing once the panel is closed). */
  post(message: ToApp): void {
    if (this.closed) return;
    testLogs.get(this.kind.name)?.posted.push(message);
    void this.panel.webview.postMessage(message);
  }

  /**
   * Checks a message from the app against the protocol's rules and the logic's own problem(), then hands it to the
   * logic. Resolves to why it was refused (logged as a warning), or null once the logic has handled it.
   */
  async deliver(raw: unknown): Promise<string | null> {
    const checked = checkMessage<ToHost>(raw, this.kind.rules);
    const problem = checked.ok ? (this.logic?.problem?.(checked.message) ?? null) : checked.error;
    if (!checked.ok || problem !== null || !this.logic) {
      const why = problem ?? 'the panel is not ready';
      testLogs.get(this.kind.name)?.rejected.push(why);
      this.services.log.warn(`${this.kind.name} panel: ignored a message from the webview: ${why}`);
      this.logic?.onRefused?.(why);
      return why;
    }
    try {
      await this.logic.receive(checked.message);
    } catch (err) {
      this.services.log.showError(`${this.kind.name} panel`, err);
    }
    return null;
  }
}

/** Brings a panel of a kind back after a reload; resolves to why the saved state was not used, or null. */
type Revive<Saved> = (panel: vscode.WebviewPanel, saved: Parsed<Saved>) => Promise<string | null>;

/** Extra operations a panel's test hook offers besides the kit's own (posted, rejected, fromWebview, clear, send,
 *  open, close). */
export type TestOps = Record<string, (...args: unknown[]) => unknown>;

const serializers = new Map<string, vscode.WebviewPanelSerializer>();
/** What the last revive of each view type said (tests read it through `quarry.webviews.testHook`). */
const outcomes = new Map<string, string | null>();

/**
 * Registers a kind of panel: its serializer (VS Code hands it the saved state after a reload; the kit checks it with
 * `kind.restore` and calls `revive`, which decides whether an unusable state closes the panel or shows why) and, under
 * tests, its hook `quarry.<name>.testHook`.
 */
export function registerPanel<ToHost extends Message, Saved>(
  context: vscode.ExtensionContext,
  services: Services,
  kind: PanelKind<ToHost, Saved>,
  revive: Revive<Saved>,
  testOps: TestOps = {},
): void {
  registerSerializer(context, services, `quarry.${kind.name}`, (panel, state) => revive(panel, kind.restore(state)));
  if (testHooksOn(context)) registerTestHook(context, kind, testOps);
}

/** The serializer of one view type: VS Code hands it a fresh panel and the saved state after a reload. */
function registerSerializer(
  context: vscode.ExtensionContext,
  services: Services,
  viewType: string,
  revive: (panel: vscode.WebviewPanel, state: unknown) => Promise<string | null>,
): void {
  const serializer: vscode.WebviewPanelSerializer = {
    async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
      try {
        const problem = await revive(panel, state);
        outcomes.set(viewType, problem);
        if (problem) services.log.warn(`${viewType}: the panel came back empty after a reload: ${problem}`);
        else services.log.info(`${viewType}: the panel came back after a reload`);
      } catch (err) {
        outcomes.set(viewType, (err as Error).message);
        services.log.error(`${viewType}: the panel could not come back after a reload`, err);
        panel.dispose();
      }
    },
  };
  serializers.set(viewType, serializer);
  context.subscriptions.push(vscode.window.registerWebviewPanelSerializer(viewType, serializer));
}

function registerTestHook(context: vscode.ExtensionContext, kind: { name: string }, extra: TestOps): void {
  const log: PanelTestLog = { posted: [], rejected: [], fromWebview: [] };
  testLogs.set(kind.name, log);
  const copy = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
  const hook = async (op: unknown, ...args: unknown[]): Promise<unknown> => {
    const own = typeof op === 'string' && Object.hasOwn(extra, op) ? extra[op] : undefined;
    if (own) return own(...args);
    switch (op) {
      case 'posted':
        return copy(log.posted);
      case 'rejected':
        return [...log.rejected];
      case 'fromWebview':
        return [...log.fromWebview];
      case 'clear':
        log.posted.length = 0;
        log.rejected.length = 0;
        log.fromWebview.length = 0;
        return true;
      case 'send': {
        // As if every open panel's app (or only the one under args[1]) had sent args[0]; resolves to the refusals.
        // A key left undefined (a test's wrapper passing its optional argument on) means every panel.
        const open = PanelController.all(kind).filter((p) => args[1] === undefined || p.key === args[1]);
        if (!open.length) throw new Error(`quarry.${kind.name}.testHook: no ${kind.name} panel is open`);
        return Promise.all(open.map((p) => p.deliver(args[0])));
      }
      case 'open':
        return PanelController.all(kind).map((p) => p.key);
      case 'close':
        for (const p of PanelController.all(kind)) if (args[0] === undefined || p.key === args[0]) p.dispose();
        return true;
      default:
        throw new Error(`quarry.${kind.name}.testHook: unknown op ${JSON.stringify(op)}`);
    }
  };
  context.subscriptions.push(vscode.commands.registerCommand(`quarry.${kind.name}.testHook`, hook));
}

/**
 * Test-only: `quarry.webviews.testHook('revive', viewType, state)` creates a panel of that type and passes it with
 * `state` to the registered serializer, as VS Code does after a reload; it resolves to what the revive said (null:
 * restored). `viewTypes` lists the registered serializers.
 */
export function registerRestoreTestHook(context: vscode.ExtensionContext): void {
  if (!testHooksOn(context)) return;
  const hook = async (op: unknown, viewType?: unknown, state?: unknown): Promise<unknown> => {
    switch (op) {
      case 'viewTypes':
        return [...serializers.keys()];
      case 'revive': {
        const serializer = typeof viewType === 'string' ? serializers.get(viewType) : undefined;
        if (!serializer) throw new Error(`quarry.webviews.testHook: no serializer for ${JSON.stringify(viewType)}`);
        const panel = vscode.window.createWebviewPanel(
          viewType as string,
          'Quarry',
          { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
          webviewOptions(context.extensionUri),
        );
        await serializer.deserializeWebviewPanel(panel, state);
        return outcomes.get(viewType as string) ?? null;
      }
      default:
        throw new Error(`quarry.webviews.testHook: unknown op ${JSON.stringify(op)}`);
    }
  };
  context.subscriptions.push(vscode.commands.registerCommand('quarry.webviews.testHook', hook));
}
