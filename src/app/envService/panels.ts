// The panels a client of the environment service may name: a built-in panel, or a panel file inside a folder the
// operator allowed with --panel-dir (none by default). A file is opened only when its real path (symlinks followed) is
// inside such a folder, only if it is a regular file no larger than the cap, without blocking (a named pipe is never
// read, a device never opened), and each refusal reads the same whether or not the path exists, so the service
// neither reads nor reveals the server's other files.
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { builtinPanel, isPanelName, panelFromText, unknownPanelMessage } from '../../core/rewards/panelFile';
import type { ResolvedPanel } from '../../core/rewards/types';
import { ServiceError } from './errors';
import { inside } from './databases';

export class PanelSource {
  private readonly builtins = new Map<string, ResolvedPanel>();
  private dirs: Promise<string[]>;

  /** `dirs`: the --panel-dir folders (absolute); `maxBytes`: the largest panel file read. */
  constructor(
    dirs: readonly string[],
    private readonly maxBytes: number,
  ) {
    this.dirs = Promise.all(dirs.map((d) => realpath(d)));
    this.dirs.catch(() => {});
  }

  /** Checks the folders exist (the server's start-up calls it, so a typo stops it there). */
  async check(): Promise<void> {
    for (const d of await this.dirs) {
      if (!(await stat(d)).isDirectory()) throw new Error(`--panel-dir ${d} is not a directory`);
    }
  }

  /** A built-in panel is resolved once; a panel file is read each time (it may be edited between requests). */
  async load(name: string): Promise<ResolvedPanel> {
    const cached = this.builtins.get(name);
    if (cached) return cached;
    const builtin = builtinPanel(name);
    if (builtin) {
      this.builtins.set(name, builtin);
      return builtin;
    }
    if (isPanelName(name)) throw new ServiceError('bad-request', unknownPanelMessage(name));
    const dirs = await this.dirs;
    if (dirs.length === 0)
      throw new ServiceError(
        'bad-request',
        `panel '${name}' is not built in, and this server reads no panel files (its operator allows a folder of ` +
          'them with --panel-dir)',
      );
    const text = await this.read(name, dirs);
    if (text === null)
      throw new ServiceError(
        'bad-request',
        `no panel file '${name}' in this server's --panel-dir folders (a regular .json file of at most ` +
          `${this.maxBytes} bytes, named relative to such a folder)`,
      );
    try {
      return panelFromText(text, `'${name}'`, false);
    } catch (err) {
      throw new ServiceError('bad-request', (err as Error).message);
    }
  }

  /** The text of the first panel file `name` names inside a folder, or null (whatever the reason). */
  private async read(name: string, dirs: string[]): Promise<string | null> {
    if (name.includes('\0')) return null;
    for (const dir of dirs) {
      const lexical = isAbsolute(name) ? resolve(name) : resolve(dir, name);
      if (!inside(dir, lexical)) continue; // refused before the file system is asked anything about it
      let real: string;
      try {
        real = await realpath(lexical);
      } catch {
        continue;
      }
      if (!inside(dir, real)) continue;
      const text = await this.readRegular(real);
      if (text !== null) return text;
    }
    return null;
  }

  /** Reads a regular file of at most maxBytes; null for anything else. Opening never blocks (O_NONBLOCK). */
  private async readRegular(path: string): Promise<string | null> {
    let handle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch {
      return null;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile() || st.size > this.maxBytes) return null;
      const buf = Buffer.alloc(st.size + 1);
      let n = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buf, n, buf.length - n, n);
        if (bytesRead === 0) break;
        n += bytesRead;
        if (n === buf.length) return null; // it grew while read
      }
      return buf.subarray(0, n).toString('utf8');
    } catch {
      return null;
    } finally {
      await handle.close();
    }
  }
}
