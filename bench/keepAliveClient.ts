// A lean HTTP/1.1 load client for the service benchmarks: real TCP connections kept alive, one request at a time on
// each (no pipelining), each request written in one piece, answers framed by their Content-Length. It does what a
// trainer's client does on the wire and little else, so on a small machine the load generator takes as little CPU as
// it can from the server it measures (fetch spends several times the server's own time per request).
import { connect, type Socket } from 'node:net';

export interface Answer {
  status: number;
  text: string;
}

export interface Connection {
  /** Sends one request and resolves with its answer; requests on one connection must not overlap. */
  request(method: string, path: string, body?: string): Promise<Answer>;
}

export interface Connections {
  list: Connection[];
  close(): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** Opens `n` keep-alive connections to `url` (http://host:port). */
export async function openConnections(url: string, n: number): Promise<Connections> {
  const u = new URL(url);
  const sockets: Socket[] = [];
  const list = await Promise.all(
    Array.from({ length: n }, async () => {
      const c = await open(u.hostname.replace(/^\[|\]$/g, ''), Number(u.port), u.host);
      sockets.push(c.socket);
      return c.connection;
    }),
  );
  return { list, close: () => sockets.forEach((s) => s.destroy()) };
}

function open(host: string, port: number, hostHeader: string): Promise<{ socket: Socket; connection: Connection }> {
  return new Promise((resolveOpen, rejectOpen) => {
    const socket = connect({ host, port, noDelay: true });
    let buf: Buffer = Buffer.alloc(0);
    let waiting: { resolve: (a: Answer) => void; reject: (e: Error) => void } | null = null;
    const fail = (err: Error) => {
      const w = waiting;
      waiting = null;
      w?.reject(err);
    };
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const end = buf.indexOf(HEAD_END);
      if (end < 0 || !waiting) return;
      const head = buf.toString('latin1', 0, end);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (!length) return fail(new Error(`an answer without Content-Length: ${head.split('\r\n')[0]}`));
      const total = end + HEAD_END.length + Number(length[1]);
      if (buf.length < total) return;
      const answer = { status: Number(head.slice(9, 12)), text: buf.toString('utf8', end + HEAD_END.length, total) };
      buf = buf.subarray(total);
      const w = waiting;
      waiting = null;
      w.resolve(answer);
    });
    socket.on('error', (err) => {
      rejectOpen(err);
      fail(err);
    });
    socket.on('close', () => fail(new Error('the server closed the connection')));
    socket.once('connect', () =>
      resolveOpen({
        socket,
        connection: {
          request(method, path, body) {
            if (waiting) return Promise.reject(new Error('one request at a time on a connection'));
            const payload = body === undefined ? '' : body;
            const head =
              `${method} ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\n` +
              (body === undefined ? '' : 'Content-Type: application/json\r\n') +
              `Content-Length: ${Buffer.byteLength(payload)}\r\n\r\n`;
            return new Promise<Answer>((resolve, reject) => {
              waiting = { resolve, reject };
              socket.write(head + payload);
            });
          },
        },
      }),
    );
  });
}
