// `quarry mcp --http`: the MCP server over streamable HTTP (the SDK's StreamableHTTPServerTransport, stateless: every
// POST /mcp gets its own server object over the shared context), with the environment service's rules before anything
// is read: the Host must name this server and an Origin must too (requestChecks.ts: no web page, no DNS rebinding), a
// body must be declared application/json, and with a token every request must carry it (Authorization: Bearer). Off
// loopback a token is required. Bodies are read with serve-env's bounded reader. Refusals are JSON-RPC errors with the
// HTTP status serve-env gives them; a failing request never stops the server.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { authorized, checkRequest, type HostRule, isLoopback, listenWithHostRule } from '../envService/requestChecks';
import { readBody, pathOf } from '../envService/server';
import { ServiceError } from '../envService/errors';

const MCP_PATH = '/mcp';

interface McpHttpOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  token?: string | null;
  allowHosts?: readonly string[];
  /** Largest request body, bytes (default 4 MiB). */
  maxBodyBytes?: number;
  /** Longest text field of a body, characters. */
  maxFieldChars?: number;
  /** A fresh MCP server over the shared context, one per request. */
  makeServer: () => McpServer;
  /** Told about a request that failed inside the transport (logged by the CLI). */
  onError?: (err: Error) => void;
}

interface McpHttpServer {
  url: string;
  close(): Promise<void>;
}

export async function startMcpHttp(opts: McpHttpOptions): Promise<McpHttpServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host) && !opts.token)
    throw new Error(
      `refusing to listen on ${host} without a token: anyone who can reach it could query your databases ` +
        '(give --token-file, or keep the default 127.0.0.1)',
    );
  const token = opts.token ? Buffer.from(opts.token) : null;
  const maxBody = opts.maxBodyBytes ?? 4 * 2 ** 20;
  const maxChars = opts.maxFieldChars ?? maxBody;
  let hosts: HostRule | undefined;
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const e =
        err instanceof ServiceError ? err : new ServiceError('internal', (err as Error)?.message ?? String(err));
      if (e.kind === 'internal') opts.onError?.(err as Error);
      refuse(res, e);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    checkRequest(req, hosts!, method === 'POST');
    if (!authorized(req, token)) {
      res.setHeader('www-authenticate', 'Bearer');
      throw new ServiceError('unauthorized', 'this server needs "Authorization: Bearer <token>" (its --token-file)');
    }
    if (pathOf(req.url ?? '/') !== MCP_PATH) throw new ServiceError('not-found', `the MCP endpoint is ${MCP_PATH}`);
    if (method !== 'POST') {
      // Stateless: no session to stream to (GET) or end (DELETE).
      res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' });
      res.end(rpcError(`${method} is not supported: this server is stateless, send each message as a POST`));
      return;
    }
    const body = await readBody(req, maxBody, maxChars);
    const mcp = opts.makeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  server.keepAliveTimeout = 65_000;
  server.maxConnections = 256;
  const bound = await listenWithHostRule(server, host, opts.port ?? 0, opts.allowHosts ?? [], token !== null);
  hosts = bound.hosts;
  return {
    url: `${bound.origin}${MCP_PATH}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function rpcError(message: string, code = -32000): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function refuse(res: ServerResponse, e: ServiceError): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const text = rpcError(e.message, e.kind === 'bad-json' ? -32700 : -32000);
  res.writeHead(e.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
