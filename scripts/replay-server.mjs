#!/usr/bin/env node
// The OpenAI-compatible replay server as a standalone process, for `quarry bench` checks and e2e runs:
//   node scripts/replay-server.mjs --script FILE.json|FILE.jsonl [--port N] [--model ID ...] [--any-model]
//       [--api-key KEY] [--default TEXT] [--no-stop-reason] [--delay-ms N] [--chunk-delay-ms N]
// Prints `listening <base URL>` on stdout once it accepts connections (with --port 0 the port is chosen then), and
// stops on SIGINT/SIGTERM. Runs the bundle dist/replayServer.js, so run `npm run build` first.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist', 'replayServer.js');

const USAGE =
  'usage: node scripts/replay-server.mjs --script FILE.json|FILE.jsonl [--port N] [--model ID ...] [--any-model]\n' +
  '       [--api-key KEY] [--default TEXT] [--no-stop-reason] [--delay-ms N] [--chunk-delay-ms N]\n' +
  'Script format and behaviour: docs/models.md (The replay server).\n';

function usage(message) {
  process.stderr.write(`replay-server: ${message}\n${USAGE}`);
  process.exit(2);
}

const opts = { models: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const value = () => {
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    return argv[++i];
  };
  const int = () => {
    const v = value();
    if (!/^\d+$/.test(v)) usage(`${a} needs a whole number, got ${JSON.stringify(v)}`);
    return Number(v);
  };
  switch (a) {
    case '--script':
      opts.script = value();
      break;
    case '--port':
      opts.port = int();
      break;
    case '--model':
      opts.models.push(value());
      break;
    case '--any-model':
      opts.anyModel = true;
      break;
    case '--api-key':
      opts.apiKey = value();
      break;
    case '--default':
      opts.defaultResponse = value();
      break;
    case '--no-stop-reason':
      opts.stopReason = false;
      break;
    case '--delay-ms':
      opts.delayMs = int();
      break;
    case '--chunk-delay-ms':
      opts.chunkDelayMs = int();
      break;
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      process.exit(0);
      break;
    default:
      usage(`unknown argument ${JSON.stringify(a)}`);
  }
}
if (!opts.script) usage('--script is required');
if (!existsSync(bundle)) usage(`${bundle} is missing: run \`npm run build\` first`);

const { startReplayServer, loadReplayScript } = createRequire(import.meta.url)(bundle);
let script;
try {
  script = loadReplayScript(resolve(opts.script));
} catch (e) {
  process.stderr.write(`replay-server: ${e.message}\n`);
  process.exit(1);
}
const { script: _file, models, ...rest } = opts;
const server = await startReplayServer({ ...rest, script, ...(models.length > 0 ? { models } : {}) }).catch((e) => {
  process.stderr.write(`replay-server: cannot listen on 127.0.0.1:${opts.port ?? 0}: ${e.message}\n`);
  process.exit(1);
});
process.stdout.write(`listening ${server.url}\n`);
const stop = () => server.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
