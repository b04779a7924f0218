// `quarry mcp` over stdio, as an MCP client starts it: the SDK's StdioClientTransport spawns `node dist/cli.js mcp`
// (this Node, the pinned one) and the whole suite runs through it; then what only stdio has — the process ends when
// its client goes, and bad flags are refused before anything is served.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cli, mcpSuite, servedFolder, text } from './suite';

const clients: Client[] = [];
after(() => Promise.all(clients.map((c) => c.close())));

async function connect(args: string[], cwd?: string): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', ...args],
    stderr: 'pipe',
    ...(cwd ? { cwd } : {}),
  });
  const client = new Client({ name: 'quarry-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

mcpSuite('stdio', { connect: async (args) => (await connect(args)).client });

test('stdio: serves its working folder by default; ask_quarry without --model says what is missing', async () => {
  const served = servedFolder();
  const { client, transport } = await connect([], served.root);
  const list = (await client.callTool({ name: 'list_databases', arguments: {} })) as CallToolResult;
  assert.match(text(list), /^3 databases \(name one by its id\):\n- bookshop \(\d+ bytes\)\n- concert /);
  const ask = (await client.callTool({
    name: 'ask_quarry',
    arguments: { database: 'bookshop', question: 'How many authors?' },
  })) as CallToolResult;
  assert.equal(ask.isError, true);
  assert.match(text(ask), /start it with "quarry mcp --model SPEC"/);
  const pid = transport.pid!;
  await client.close();
  // The server exits once its client has gone (stdin closed): no process is left behind.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && alive(pid)) await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(pid), false, 'quarry mcp is still running after its client closed');
});

test('stdio: bad flags exit 2 before serving (a missing --db-dir, a limit that is not a number, HTTP flags)', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [cli, 'mcp', ...args], { encoding: 'utf8' });
  const missing = run('--db-dir', '/nonexistent/quarry-mcp');
  assert.equal(missing.status, 2, missing.stderr);
  assert.match(missing.stderr, /is not a directory/);
  const limit = run('--max-rows', 'lots');
  assert.equal(limit.status, 2);
  assert.match(limit.stderr, /--max-rows must be a positive integer/);
  const port = run('--port', '9000');
  assert.equal(port.status, 2);
  assert.match(port.stderr, /--port is for --http only/);
  const model = run('--model', 'nonsense');
  assert.equal(model.status, 2);
  assert.match(model.stderr, /bad model spec/);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
