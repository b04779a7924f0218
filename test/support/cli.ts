// Running the quarry CLI in-process with its output captured, and replay servers closed when the test file ends:
// what the command-line tests share.
import { after } from 'node:test';
import { Writable } from 'node:stream';
import { main } from '../../src/cli/main';
import { startReplayServer, type ReplayEntry, type ReplayServer, type ReplayServerOptions } from './openaiReplayServer';

interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs `quarry ARGV…` in this process; stdout and stderr are returned as text. */
export async function runQuarry(argv: string[], cwd = process.cwd()): Promise<CliRun> {
  const text = { out: '', err: '' };
  const sink = (key: 'out' | 'err') =>
    new Writable({
      write(chunk, _enc, cb) {
        text[key] += String(chunk);
        cb();
      },
    });
  const code = await main(argv, { stdout: sink('out'), stderr: sink('err'), cwd });
  return { code, ...text };
}

/** A function starting replay servers that are all closed after the calling test file's tests. */
export function replayServers(): (
  entries: ReplayEntry[],
  opts?: Omit<ReplayServerOptions, 'script'>,
) => Promise<ReplayServer> {
  const servers: { close(): Promise<void> }[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));
  return async (entries, opts = {}) => {
    const s = await startReplayServer({ script: entries, ...opts });
    servers.push(s);
    return s;
  };
}
