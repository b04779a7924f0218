// What the environment service checks before it reads a request, so a web page (a cross-site form or fetch, or DNS
// rebinding) cannot use a token-less service on loopback: the Host header must name the server (421 otherwise), an
// Origin header must be one of those names too (403), and a body must be declared application/json (415), which no
// cross-site request can send without a CORS preflight the service never grants.
//
// The Host rule. Bound to loopback, the accepted names are 127.0.0.1, localhost and [::1] with the bound port, plus
// those the operator adds with --allow-host NAME[:PORT] (an ssh tunnel's local port, a name in /etc/hosts). Bound to
// any other address the server needs a bearer token (startEnvServer refuses otherwise), and then every Host is
// accepted: a cluster's workers reach it by the node's IP or any of its names (launch.sh uses `hostname -f`), and the
// token is what stops cross-site use, since a page can neither read it nor make a browser send it.
// The token rule: with a token configured, every request but the health check must carry `Authorization: Bearer
// <token>`, compared in constant time. `quarry mcp --http` applies the same rules.
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from './errors';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host);
}

export class HostRule {
  /** Accepted `name:port` pairs (lower case, IPv6 in brackets); null: any Host (a token guards the server). */
  private readonly exact: Set<string> | null;
  /** Names the operator allowed on any port. */
  private readonly anyPort = new Set<string>();
  /** Host headers already judged: every request carries one, and a client sends the same one each time. */
  private readonly judged = new Map<string, boolean>();

  constructor(bound: string, port: number, allow: readonly string[], tokenGuarded: boolean) {
    if (tokenGuarded && !isLoopback(bound)) {
      this.exact = null;
      return;
    }
    this.exact = new Set(
      [...(isLoopback(bound) ? ['127.0.0.1', 'localhost', '[::1]'] : []), bracket(bound)].map((h) => `${h}:${port}`),
    );
    for (const a of allow) {
      const name = a.trim().toLowerCase();
      if (/:\d+$/.test(name) && !/^[^[]*:.*:/.test(name)) this.exact.add(name);
      else this.anyPort.add(bracket(name));
    }
  }

  /** Whether every Host is answered (a token guards the server). */
  get any(): boolean {
    return this.exact === null;
  }

  accepts(hostHeader: string): boolean {
    if (this.exact === null) return true;
    let ok = this.judged.get(hostHeader);
    if (ok === undefined) {
      ok = this.judge(hostHeader);
      if (this.judged.size >= 256) this.judged.clear();
      this.judged.set(hostHeader, ok);
    }
    return ok;
  }

  private judge(hostHeader: string): boolean {
    if (this.exact === null) return true;
    const h = hostHeader.trim().toLowerCase();
    const m = /^(\[[^\]]*\]|[^:]+)(?::(\d+))?$/.exec(h);
    if (!m) return false;
    return this.exact.has(`${m[1]}:${m[2] ?? '80'}`) || this.anyPort.has(m[1]);
  }
}

/** IPv6 literals in brackets, as a Host header writes them. */
function bracket(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host.toLowerCase()}]` : host.toLowerCase();
}

/** Throws the refusal a request gets before anything else is done with it, if any. */
export function checkRequest(req: IncomingMessage, hosts: HostRule, body: boolean): void {
  const host = req.headers.host;
  if (!host || !hosts.accepts(host))
    throw new ServiceError(
      'wrong-host',
      'this server does not answer to that Host name (its operator can add one with --allow-host)',
    );
  const origin = req.headers.origin;
  if (origin !== undefined && !sameServer(origin, host, hosts))
    throw new ServiceError('forbidden', 'cross-origin requests are refused (this service is not for web pages)');
  if (body && !isJson(req.headers['content-type']))
    throw new ServiceError('unsupported-media-type', 'send the body as JSON with "Content-Type: application/json"');
}

/** An Origin naming this server: a name it answers to, or (when it answers to any) the request's own Host. */
function sameServer(origin: string, host: string, hosts: HostRule): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file: page) among others
  }
  if (url.protocol !== 'http:') return false;
  if (!hosts.any) return hosts.accepts(url.host);
  const withPort = (h: string) => (/:\d+$/.test(h) ? h.toLowerCase() : `${h.toLowerCase()}:80`);
  return withPort(url.host) === withPort(host);
}

function isJson(contentType: string | undefined): boolean {
  if (contentType === 'application/json') return true; // what nearly every client sends, as is
  return (contentType ?? '').split(';')[0].trim().toLowerCase() === 'application/json';
}

/** Whether the request carries the bearer token (always true when none is configured). */
export function authorized(req: IncomingMessage, token: Buffer | null): boolean {
  if (!token) return true;
  const h = req.headers.authorization ?? '';
  const m = /^Bearer (.+)$/.exec(h);
  if (!m) return false;
  const given = Buffer.from(m[1]);
  return given.length === token.length && timingSafeEqual(given, token);
}

/**
 * Listens on host:port (0 picks a free port) and answers the Host rule for the port it got and the origin to print
 * (IPv6 addresses bracketed): serve-env and quarry mcp --http bind the same way.
 */
export async function listenWithHostRule(
  server: Server,
  host: string,
  port: number,
  allowHosts: readonly string[],
  tokened: boolean,
): Promise<{ hosts: HostRule; origin: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { hosts: new HostRule(host, addr.port, allowHosts, tokened), origin: `http://${shown}:${addr.port}` };
}
