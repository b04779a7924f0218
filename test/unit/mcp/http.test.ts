// `quarry mcp --http` in a child process: the whole suite through the SDK's StreamableHTTPClientTransport with the
// bearer token, then serve-env's request rules seen from a raw HTTP client — a wrong Host (DNS rebinding), a foreign
// Origin (a web page), a body not declared JSON, a missing or wrong token, each refused before any tool runs — and
// the refusal to listen off loopback without a token.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir } from '../../helpers/fixtures';
import { cli, mcpSuite, servedFolder } from './suite';

const TOKEN = 'mcp-test-token-5d1f0c';
const tokenFile = join(tempDir(), 'token');
writeFileSync(tokenFile, `${TOKEN}\n`);

const children: ChildProcess[] = [];
const clients: Client[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(children.map(stop));
});

/** Starts `quarry mcp --http --port 0 ARGS…` and resolves with its URL, from the first stdout line. */
async function serve(args: string[]): Promise<string> {
  const child = spawn(process.execPath, [cli, 'mcp', '--http', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d));
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`quarry mcp --http exited ${code}: ${err}`)));
  });
  const m = /^quarry mcp listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(first);
  assert.ok(m, first);
  return m[1];
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function connect(url: string, token: string | null): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  const client = new Client({ name: 'quarry-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

mcpSuite('http', { connect: async (args) => connect(await serve([...args, '--token-file', tokenFile]), TOKEN) });

interface Raw {
  status: number;
  body: string;
}

/** One request with exactly these headers (node:http lets a test set Host, which fetch does not). */
function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Raw> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: opts.method ?? 'POST', headers: opts.headers },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

test('http: Host, Origin, content type and token are checked before anything is read', async () => {
  const url = await serve(['--db-dir', servedFolder().root, '--token-file', tokenFile]);
  const port = new URL(url).port;
  const good = {
    host: `127.0.0.1:${port}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${TOKEN}`,
  };
  const ok = await raw(url, { headers: good, body: LIST });
  assert.equal(ok.status, 200, ok.body);
  assert.match(ok.body, /"run_sql"/);
  const cases: [string, Record<string, string>, number, RegExp][] = [
    ['a rebinding Host', { ...good, host: `evil.example:${port}` }, 421, /Host/],
    ['a Host on another port', { ...good, host: `127.0.0.1:${Number(port) + 1}` }, 421, /Host/],
    ['a web page Origin', { ...good, origin: 'http://evil.example' }, 403, /cross-origin/],
    ['a null Origin', { ...good, origin: 'null' }, 403, /cross-origin/],
    ['a form body', { ...good, 'content-type': 'application/x-www-form-urlencoded' }, 415, /application\/json/],
    ['a text body', { ...good, 'content-type': 'text/plain' }, 415, /application\/json/],
    ['no token', Object.fromEntries(Object.entries(good).filter(([k]) => k !== 'authorization')), 401, /Bearer/],
    ['a wrong token', { ...good, authorization: `Bearer ${TOKEN}x` }, 401, /Bearer/],
  ];
  for (const [what, headers, status, why] of cases) {
    const r = await raw(url, { headers, body: LIST });
    assert.equal(r.status, status, `${what}: ${r.status} ${r.body}`);
    assert.match(JSON.parse(r.body).error.message, why, what);
    assert.doesNotMatch(r.body, /run_sql/, `${what} was answered`);
  }
  // Its own Origin is fine (a local tool that sends one).
  const same = await raw(url, { headers: { ...good, origin: `http://localhost:${port}` }, body: LIST });
  assert.equal(same.status, 200, same.body);
  const notJson = await raw(url, { headers: good, body: '{"jsonrpc": ' });
  assert.equal(notJson.status, 400);
  assert.equal(JSON.parse(notJson.body).error.code, -32700);
  const get = await raw(url, { method: 'GET', headers: good });
  assert.equal(get.status, 405);
  const elsewhere = await raw(url.replace(/\/mcp$/, '/other'), { headers: good, body: LIST });
  assert.equal(elsewhere.status, 404);
  // The SDK's client without the token cannot even initialize.
  await assert.rejects(connect(url, null), /401|Bearer|Unauthorized/i);
});

test('http: a client without the token, or off loopback without one, is refused', () => {
  const r = spawnSync(process.execPath, [cli, 'mcp', '--http', '--host', '0.0.0.0', '--port', '0'], {
    encoding: 'utf8',
    cwd: servedFolder().root,
  });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /refusing to listen on 0\.0\.0\.0 without a token/);
  const empty = join(tempDir(), 'empty');
  writeFileSync(empty, '\n');
  const e = spawnSync(process.execPath, [cli, 'mcp', '--http', '--token-file', empty], { encoding: 'utf8' });
  assert.equal(e.status, 2);
  assert.match(e.stderr, /is empty/);
});
