// Types for scripts/editor/lib.mjs, for the TypeScript that loads it (test/e2e/harness.ts).
import type { ChildProcess } from 'node:child_process';
import type { Browser } from 'playwright-core';

export const root: string;
export const node24: string;
export const chromiumPath: string;
export function since(t0: number): string;
export function ensureCodeServer(opts?: { browser?: boolean }): string;
export function build(opts?: { tests?: boolean }): void;
export function packageVsix(out: string, opts?: { tries?: number }): string;
export function freePort(): Promise<number>;
export function makeTempDir(prefix: string): string;
export function buildSqlite(sqlFile: string, dbFile: string): string;
export function prepareWorkspace(
  dir: string,
  opts?: { samples?: boolean; settings?: Record<string, unknown> },
): string[];
export function writeWorkspaceSettings(dir: string, settings: Record<string, unknown>): void;
export function killGroup(proc: ChildProcess | undefined, graceMs?: number): Promise<void>;

export interface StateDirs {
  userData: string;
  extensions: string;
  xdgConfig: string;
  xdgData: string;
  xdgCache: string;
}
export function stateDirs(base: string): StateDirs;
export function installExtension(entry: string, dirs: StateDirs, vsix: string): string;

export interface CodeServer {
  url: string;
  port: number;
  proc: ChildProcess;
  stop(): Promise<void>;
  /** The last lines code-server printed. */
  output: string[];
}
export function startCodeServer(opts: {
  entry: string;
  dirs: StateDirs;
  port?: number;
  workspace?: string;
  env?: Record<string, string>;
  onOutput?: (line: string) => void;
  timeoutMs?: number;
  /** Keep VS Code's Workspace Trust on (default off: `--disable-workspace-trust`, every folder trusted). */
  workspaceTrust?: boolean;
}): Promise<CodeServer>;
export function launchChromium(opts?: { headless?: boolean }): Promise<Browser>;
export function enableSmokeTestDriverScript(): void;
export function folderUrl(base: string, folder: string, payload?: [string, string][]): string;
export function removeDir(dir: string | undefined): void;
