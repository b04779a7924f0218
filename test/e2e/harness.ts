// End-to-end harness: the PACKAGED extension (quarry-<version>.vsix) installed into a fresh code-server, a fresh copy
// of the sample workspace (test/workspace, databases built from SQL), Debian's Chromium driven by playwright-core.
// Specs (`test/e2e/<feature>.e2e.ts`, node's test runner) open one editor in `before` and close it in `after`:
//
//   let ed: Editor;
//   before(async () => { ed = await openEditor({ openai: { script: [...] } }); });
//   after(async () => { await ed?.close(); });
//   test('…', async () => { await ed.runCommand('Quarry: Ask a Question…'); … await ed.screenshot('ask-done'); });
//
// Run them with `npm run test:e2e` (scripts/editor/run-e2e.mjs builds and packages the VSIX first).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach } from 'node:test';
import type { Browser, Frame, Locator, Page } from 'playwright-core';
import { repoRoot } from '../helpers/fixtures';
import { startReplayServer, type ReplayServer, type ReplayServerOptions } from '../support/openaiReplayServer';

type Lib = typeof import('../../scripts/editor/lib.mjs');
type CodeServer = import('../../scripts/editor/lib.mjs').CodeServer;

const artifactsDir = join(repoRoot, 'test-artifacts');
const screenshotsDir = join(artifactsDir, 'screenshots');

let libPromise: Promise<Lib> | undefined;
/** scripts/editor/lib.mjs (ESM, shared with the runner scripts), loaded by absolute URL so any out dir works. */
function lib(): Promise<Lib> {
  libPromise ??= import(pathToFileURL(join(repoRoot, 'scripts', 'editor', 'lib.mjs')).href) as Promise<Lib>;
  return libPromise;
}

interface EditorOptions {
  /** Start the loopback OpenAI-compatible test server with these options and point the workspace's settings at it
   *  (`quarry.model.backend` openai, `quarry.model.baseUrl`, `quarry.model.name` = its first model). */
  openai?: ReplayServerOptions;
  /** More workspace settings (.vscode/settings.json). */
  settings?: Record<string, unknown>;
  /** Also copy media/samples (bookshop) into the workspace. */
  samples?: boolean;
  /** Name for this editor's log file under test-artifacts/logs (default: the workspace's temp dir name). */
  name?: string;
  viewport?: { width: number; height: number };
  /**
   * Open the workspace untrusted: Workspace Trust on (code-server without `--disable-workspace-trust`), no startup
   * prompt, so the folder opens in Restricted Mode. Every other spec runs with trust off (all folders trusted).
   */
  untrusted?: boolean;
}

export interface Editor {
  readonly page: Page;
  /** code-server's base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** The workspace folder (a fresh copy of test/workspace with its databases built). */
  readonly workspace: string;
  /** The OpenAI-compatible test server, when `openai` was given. */
  readonly openai: ReplayServer | undefined;
  /** Workbench log lines (console of the workbench, errors included), in order. */
  readonly log: string[];
  /** Runs a command through the palette (F1) by its full title, e.g. 'Quarry: Show Log'. */
  runCommand(title: string): Promise<void>;
  /**
   * Picks the quick-pick entry whose label is `label` (a command's follow-up picker). Right after `runCommand`, a
   * picker that closed before the pick is opened again by running the command again (at most twice, said in the
   * output): a webview of the previous test taking focus back a moment later closes it, as focus loss closes any
   * quick pick.
   */
  pick(label: string | RegExp): Promise<void>;
  /** Types into the open quick input (a command's input box) and presses Enter; reopens it as `pick` does. */
  answer(text: string): Promise<void>;
  /** Opens a view container from the activity bar by its title ('Quarry'), with the mouse. */
  openActivityView(title: string): Promise<Locator>;
  /**
   * The content frame of a webview (two iframes deep) whose text contains `contains` (any webview if omitted). With
   * `within`, only the text of that selector's first element counts (a job panel's `h1`, not its list of other jobs).
   */
  webview(contains?: string | RegExp, timeoutMs?: number, within?: string): Promise<Frame>;
  /**
   * Reloads the window the way "Developer: Reload Window" does (VS Code shuts the workbench down first, so its editors
   * and webview states are saved), then waits for the workbench again.
   */
  reloadWindow(): Promise<void>;
  /**
   * Waits for the save dialog to propose a path ending in `fileName` (code-server's save dialog is VS Code's simple
   * file dialog: a quick input that fills in the proposed path a moment after it opens), then leaves it open.
   */
  saveDialogProposes(fileName: string): Promise<void>;
  /** Texts of the notification toasts shown now. */
  notifications(): Promise<string[]>;
  /**
   * The notification whose text matches `re`, from the notification center (opened with the status bar's bell when
   * it is closed), waiting up to `timeoutMs` for it.
   */
  notification(re: RegExp, timeoutMs?: number): Promise<Locator>;
  /** Saves a PNG of the whole window to test-artifacts/screenshots/<name>.png and returns its path. */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/** Everything an editor started, so a signal or an early exit still stops it. */
interface Running {
  server?: CodeServer;
  browser?: Browser;
  replay?: ReplayServer;
  temp?: string;
}
const running = new Set<Running>();
let exitHooks = false;

function installExitHooks(): void {
  if (exitHooks) return;
  exitHooks = true;
  // code-server runs in its own process group (so it can be stopped whole): kill those groups even on a hard exit.
  process.on('exit', () => {
    for (const r of running) {
      const pid = r.server?.proc.pid;
      if (pid !== undefined)
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* gone */
        }
    }
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      void Promise.allSettled([...running].map((r) => stop(r))).finally(() => process.exit(130));
    });
  }
}

async function stop(r: Running): Promise<void> {
  running.delete(r);
  const { removeDir } = await lib();
  await r.browser?.close().catch(() => {});
  await r.server?.stop();
  await r.replay?.close().catch(() => {});
  if (!process.env.QUARRY_E2E_KEEP) removeDir(r.temp);
}

/**
 * The packaged extension: QUARRY_VSIX (run-e2e.mjs sets it to the VSIX it just packaged), else
 * quarry-<version>.vsix at the repository root (npm run package), for a spec run by hand with node --test.
 */
function vsixPath(): string {
  const fromEnv = process.env.QUARRY_VSIX;
  if (fromEnv) return fromEnv;
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  const file = join(repoRoot, `quarry-${version}.vsix`);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run package (npm run test:e2e does it for you)`);
  return file;
}

const USER_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'security.workspace.trust.enabled': false,
  // Screenshots and palette checks want a calm window; the chat side bar stays closed until a spec opens it, so
  // editors and webviews get the width.
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'window.commandCenter': false,
  'chat.commandCenter.enabled': false,
};

/** `untrusted: true`: Workspace Trust on, and the folder opened in Restricted Mode without the startup dialog. */
const UNTRUSTED_SETTINGS = {
  'security.workspace.trust.enabled': true,
  'security.workspace.trust.startupPrompt': 'never',
  'security.workspace.trust.banner': 'always',
};

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Starts code-server with the packaged extension and the sample workspace, and opens it in Chromium. */
export async function openEditor(opts: EditorOptions = {}): Promise<Editor> {
  const L = await lib();
  installExitHooks();
  const r: Running = {};
  running.add(r);
  try {
    r.temp = L.makeTempDir(`quarry-e2e-${process.env.QUARRY_E2E_RUN ?? 'x'}-`);
    const dirs = L.stateDirs(r.temp);
    mkdirSync(join(dirs.userData, 'User'), { recursive: true });
    const userSettings = opts.untrusted ? { ...USER_SETTINGS, ...UNTRUSTED_SETTINGS } : USER_SETTINGS;
    writeFileSync(join(dirs.userData, 'User', 'settings.json'), JSON.stringify(userSettings, null, 2));
    const workspace = join(r.temp, 'workspace');
    const settings: Record<string, unknown> = { ...opts.settings };
    if (opts.openai) {
      r.replay = await startReplayServer(opts.openai);
      settings['quarry.model.backend'] = 'openai';
      settings['quarry.model.baseUrl'] = r.replay.url;
      settings['quarry.model.name'] = r.replay.options.models?.[0] ?? 'replay';
    }
    L.prepareWorkspace(workspace, { samples: opts.samples, settings });

    const entry = L.ensureCodeServer();
    // A fresh install per editor (about 3 s), exactly as a user installs the VSIX.
    L.installExtension(entry, dirs, vsixPath());

    r.server = await L.startCodeServer({ entry, dirs, workspace, workspaceTrust: opts.untrusted === true });
    r.browser = await L.launchChromium({ headless: !process.env.QUARRY_E2E_HEADED });
    const page = await r.browser.newPage({ viewport: opts.viewport ?? { width: 1440, height: 900 } });
    const log: string[] = [];
    await page.exposeFunction('codeAutomationLog', (type: string, message: unknown) => {
      log.push(`[${type}] ${Array.isArray(message) ? message.map(String).join(' ') : String(message)}`);
    });
    page.on('pageerror', (err) => log.push(`[pageerror] ${err.message}`));
    // The smoke-test driver also routes the workbench's log to codeAutomationLog, which the editor keeps.
    await page.addInitScript(L.enableSmokeTestDriverScript);
    // A busy machine can take long to serve the workbench; the waits below bound it too.
    await page.goto(L.folderUrl(r.server.url, workspace), { timeout: 180_000 });
    await page.locator('.monaco-workbench .part.activitybar').waitFor({ state: 'visible', timeout: 180_000 });
    await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 60_000 });
    const name = opts.name ?? r.temp.split('/').pop()!;
    return makeEditor(page, r, workspace, log, name);
  } catch (err) {
    await stop(r);
    throw err;
  }
}

function makeEditor(page: Page, r: Running, workspace: string, log: string[], name: string): Editor {
  const quickInput = page.locator('.quick-input-widget');
  const quickInputBox = quickInput.locator('.quick-input-box input');
  const rows = quickInput.locator('.quick-input-list .monaco-list-row');
  /** The quick-pick row whose label is `label` (a string matches the whole label). */
  const pickRow = (label: string | RegExp) => {
    const text = typeof label === 'string' ? new RegExp(`^${escapeRegExp(label)}$`) : label;
    return rows.filter({ has: page.locator('.label-name', { hasText: text }) }).first();
  };

  async function openPalette(): Promise<void> {
    await page
      .locator('.monaco-workbench')
      .click({ position: { x: 5, y: 400 } })
      .catch(() => {});
    await page.keyboard.press('F1');
    await quickInputBox.waitFor({ state: 'visible', timeout: 15_000 });
  }

  /** VS Code reports a command that throws (or has no handler) in a modal dialog: turn that into the test's error. */
  async function failOnCommandErrorDialog(title: string): Promise<void> {
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'resulted in an error' });
    if (
      !(await dialog.waitFor({ state: 'visible', timeout: 750 }).then(
        () => true,
        () => false,
      ))
    )
      return;
    const text = (await dialog.innerText()).replace(/\s+/g, ' ').trim();
    await page.keyboard.press('Escape');
    throw new Error(`"${title}" failed: ${text}`);
  }

  /**
   * The command `runCommand` ran last and when it returned, until the first pick or answer. Only a pick or answer that
   * comes within 10 s of it is taken as its picker's (not one a webview's button opened later).
   */
  let justRan: { title: string; at: number } | undefined;

  /**
   * Waits with `shown`; when it times out because the quick input closed right after `runCommand`, runs that command
   * once more and waits again. Anything else is the test's error, with what the picker showed.
   */
  async function reopenIfClosed(shown: () => Promise<void>, what: string): Promise<void> {
    const title = justRan && Date.now() - justRan.at < 10_000 ? justRan.title : undefined;
    justRan = undefined;
    const ok = () =>
      shown().then(
        () => true,
        () => false,
      );
    if (await ok()) return;
    for (let again = 1; again <= 2 && title !== undefined && !(await quickInput.isVisible()); again++) {
      console.log(`# the quick input of "${title}" closed before the answer; running the command again (${again})`);
      await editor.runCommand(title);
      justRan = undefined;
      if (await ok()) return;
    }
    const listed = await rows.allTextContents().catch(() => []);
    throw new Error(
      `${title ? `"${title}": ` : ''}${what} in the quick input (it showed: ${listed.join(' | ') || 'nothing'})`,
    );
  }

  const editor: Editor = {
    page,
    url: r.server!.url,
    workspace,
    openai: r.replay,
    log,

    async runCommand(title) {
      justRan = undefined;
      const wanted = rows.filter({
        has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(title)}$`) }),
      });
      // Right after the workbench loads the palette sometimes answers "No matching commands" once, and a webview that
      // takes the focus back (a panel the previous test typed into) closes it before it is typed into: try again.
      for (let attempt = 1; ; attempt++) {
        await openPalette();
        const typed = await quickInputBox.fill(`>${title}`, { timeout: 5_000 }).then(
          () => true,
          () => false,
        );
        const found =
          typed &&
          (await wanted
            .first()
            .waitFor({ state: 'visible', timeout: 5_000 })
            .then(
              () => true,
              () => false,
            ));
        if (found) {
          const first = (await rows.first().locator('.label-name').first().textContent())?.trim();
          if (first === title) await page.keyboard.press('Enter');
          else await wanted.first().click();
          await failOnCommandErrorDialog(title);
          justRan = { title, at: Date.now() };
          return;
        }
        await page.keyboard.press('Escape');
        if (attempt === 4) {
          const shown = await rows.allTextContents().catch(() => []);
          throw new Error(
            `command "${title}" not in the palette after ${attempt} tries (palette ` +
              `showed: ${shown.join(' | ') || 'nothing'})`,
          );
        }
        await page.waitForTimeout(1_000 * attempt);
      }
    },

    async pick(label) {
      const row = pickRow(label);
      await reopenIfClosed(() => row.waitFor({ state: 'visible', timeout: 15_000 }), `no entry ${label}`);
      await row.click();
    },

    async answer(text) {
      await reopenIfClosed(() => quickInputBox.waitFor({ state: 'visible', timeout: 15_000 }), 'no input box');
      await quickInputBox.fill(text);
      await page.keyboard.press('Enter');
    },

    async openActivityView(title) {
      const item = page
        .locator(
          `.part.activitybar .action-item a[aria-label^="${title}"], .part.activitybar ` +
            `.action-item[aria-label^="${title}"]`,
        )
        .first();
      await item.waitFor({ state: 'visible', timeout: 30_000 });
      const container = page.locator('.part.sidebar');
      const open = await container
        .locator('.composite.title', { hasText: new RegExp(escapeRegExp(title), 'i') })
        .isVisible()
        .catch(() => false);
      if (!open) await item.click();
      await container.waitFor({ state: 'visible' });
      return container;
    },

    async webview(contains, timeoutMs = 30_000, within = 'body') {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // A webview is an outer iframe (VS Code's host page) holding the app's iframe: the app is two frames deep.
        for (const frame of page.frames()) {
          const parent = frame.parentFrame();
          if (!parent?.parentFrame() || frame.isDetached()) continue;
          if (contains === undefined) return frame;
          const text = await frame
            .locator(within)
            .first()
            .innerText({ timeout: 1_000 })
            .catch(() => '');
          if (typeof contains === 'string' ? text.includes(contains) : contains.test(text)) return frame;
        }
        if (Date.now() > deadline) {
          throw new Error(
            `no webview ${contains === undefined ? '' : `showing ${String(contains)} `}within ${timeoutMs / 1000} s`,
          );
        }
        await page.waitForTimeout(250);
      }
    },

    async reloadWindow() {
      const loaded = page.waitForEvent('load', { timeout: 120_000 }).then(
        () => null,
        (err: Error) => err,
      );
      await editor.runCommand('Developer: Reload Window');
      const failed = await loaded;
      if (failed) throw failed;
      await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: 60_000 });
    },

    async saveDialogProposes(fileName) {
      await quickInputBox.waitFor({ state: 'visible', timeout: 15_000 });
      await page.waitForFunction(
        (end) =>
          (
            document.querySelector('.quick-input-widget .quick-input-box input') as HTMLInputElement | null
          )?.value.endsWith(end),
        fileName,
        { timeout: 15_000 },
      );
    },

    async notifications() {
      return page.locator('.notifications-toasts .notification-toast .notification-list-item-message').allInnerTexts();
    },

    async notification(re, timeoutMs = 60_000) {
      const center = page.locator('.notifications-center');
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (!(await center.isVisible().catch(() => false)))
          await page
            .locator('[id="status.notifications"]')
            .click()
            .catch(() => {});
        const item = center.locator('.notification-list-item', { hasText: re }).first();
        if (await item.isVisible().catch(() => false)) return item;
        await page.waitForTimeout(500);
      }
      const shown = (await center.innerText().catch(() => '')).trim();
      throw new Error(`no notification matching ${re} (the center shows: ${shown})`);
    },

    async screenshot(shotName) {
      mkdirSync(screenshotsDir, { recursive: true });
      const file = join(screenshotsDir, `${shotName}.png`);
      await page.screenshot({ path: file });
      return file;
    },

    async close() {
      const logs = join(artifactsDir, 'logs');
      mkdirSync(logs, { recursive: true });
      writeFileSync(join(logs, `${name}.log`), log.join('\n') + '\n');
      await stop(r);
    },
  };
  return editor;
}

/**
 * Registers an afterEach that saves a screenshot after every test of the spec, passing or not, as
 * test-artifacts/screenshots/<prefix>-after-<test name>.png: what the window showed when a test ended is the first
 * thing to look at when it failed.
 */
export function screenshotAfterEach(prefix: string, editor: () => Editor | undefined): void {
  afterEach(async (t) => {
    const ed = editor();
    if (!ed) return;
    const slug = t.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60);
    await ed.screenshot(`${prefix}-after-${slug}`).catch(() => {});
  });
}
