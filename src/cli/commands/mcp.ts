// `quarry mcp`: Quarry's sandbox as any agent's SQL tool — a Model Context Protocol server over stdio (the default:
// an MCP client starts it as a subprocess) or streamable HTTP on loopback (--http), serving the SQLite databases of the
// folder it starts in (or --db-dir). The tools and their limits are in src/app/mcp; usage in docs/mcp.md. Over stdio,
// stdout carries the protocol alone: everything else goes to stderr.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { readTokenFile } from '../tokenFile';
import { positiveInt } from '../../core/db/execOptions';
import { createSqlPool } from '../../core/db/pool';
import { ASK_PROTOCOL_NAMES } from '../../core/agent/protocols';
import type { ProtocolName } from '../../core/agent/types';
import { createModel } from '../../core/models';
import { ModelError, type SamplingOptions } from '../../core/models/types';
import { DEFAULT_TRAJECTORY_STORE, trajectoryStorePath } from '../../app/trajectoryStore';
import { ServedDatabases } from '../../app/mcp/databases';
import { DEFAULT_MCP_LIMITS, type McpLimits } from '../../app/mcp/limits';
import type { McpAgent, McpToolContext } from '../../app/mcp/tools';
import { createMcpServer } from '../../app/mcp/server';
import { startMcpHttp } from '../../app/mcp/http';

const DEFAULT_MCP_PORT = 8377;
const DEFAULT_MODEL_TIMEOUT_MS = 120_000;
const L = DEFAULT_MCP_LIMITS;

const usage = `Usage: quarry mcp [--db-dir DIR] [--http [--host 127.0.0.1] [--port ${DEFAULT_MCP_PORT}] [--token-file F]
                  [--allow-host NAME[:PORT]...]] [--max-rows N] [--max-chars N] [--max-schema-chars N]
                  [--timeout-ms N] [--max-sql-chars N] [--max-sample-rows N] [--jobs N]
                  [--model SPEC [--protocol P] [--max-turns N] [--temperature T] [--model-timeout-ms N]
                   [--trajectory FILE | --no-save]]

Serves Quarry's read-only SQL sandbox to any MCP client (VS Code, Claude Code, Cursor…): tools list_databases,
describe_schema, sample_rows, run_sql, explain_query and ask_quarry over the SQLite files (*.sqlite, *.sqlite3, *.db)
under the working folder. Configuration for each client: docs/mcp.md.

  --db-dir DIR   serve the databases under DIR instead of the working folder; nothing outside it is opened
  --http         streamable HTTP at http://HOST:PORT/mcp instead of stdio (the first stdout line gives the URL)
  --host         address to bind (default 127.0.0.1; any other needs --token-file)
  --port         port (default ${DEFAULT_MCP_PORT}; 0: a free one)
  --token-file F a file holding the bearer token every HTTP request must send (Authorization: Bearer …)
  --allow-host NAME[:PORT]  another Host name to answer to (as serve-env)
Limits every call is held to (a call may ask for less; more is refused as a tool error):
  --max-rows N         rows a run_sql or sample_rows answer keeps (default ${L.maxRows}; 50 unless a call asks)
  --max-chars N        characters of a result, plan or answer (default ${L.maxChars})
  --max-schema-chars N characters of a described schema (default ${L.maxSchemaChars})
  --timeout-ms N       longest a statement may run before its worker is killed (default ${L.timeoutMs})
  --max-sql-chars N    longest SQL text or question (default ${L.maxSqlChars})
  --max-sample-rows N  example rows per table a schema may show (default ${L.maxSampleRows})
  --jobs N             SQL worker processes (default 2)
Quarry's own agent (ask_quarry; without --model the tool answers that it has no model):
  --model SPEC         openai:<baseURL>#<model> or onnx:<dir>, as quarry ask
  --protocol NAME      ${ASK_PROTOCOL_NAMES.join(', ')} (default skyrl)
  --max-turns N        turn budget (default: the protocol's own)
  --temperature T      sampling temperature (default: the server's)
  --model-timeout-ms N limit of each model call (default ${DEFAULT_MODEL_TIMEOUT_MS})
  --trajectory FILE    where episodes are appended (default ${DEFAULT_TRAJECTORY_STORE} in the working folder,
                       as quarry ask saves them)
  --no-save            do not save trajectories

Stops when its client closes stdin (stdio), or on Ctrl-C / TERM / HUP. Exit 0 when stopped, 2 on bad input.`;

const LIMIT_FLAGS = {
  'max-rows': 'maxRows',
  'max-chars': 'maxChars',
  'max-schema-chars': 'maxSchemaChars',
  'timeout-ms': 'timeoutMs',
  'max-sql-chars': 'maxSqlChars',
  'max-sample-rows': 'maxSampleRows',
} as const satisfies Record<string, keyof McpLimits>;

export const mcpCommand: Command = {
  name: 'mcp',
  summary: "Serve Quarry's read-only SQL sandbox and agent to any MCP client (stdio or HTTP)",
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'db-dir': { type: 'string' },
        http: { type: 'boolean' },
        host: { type: 'string' },
        port: { type: 'string' },
        'token-file': { type: 'string' },
        'allow-host': { type: 'string', multiple: true },
        jobs: { type: 'string' },
        model: { type: 'string' },
        protocol: { type: 'string' },
        'max-turns': { type: 'string' },
        temperature: { type: 'string' },
        'model-timeout-ms': { type: 'string' },
        trajectory: { type: 'string' },
        'no-save': { type: 'boolean' },
        ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((f) => [f, { type: 'string' as const }])),
      },
    });
    if (!values.http)
      for (const f of ['host', 'port', 'token-file', 'allow-host'] as const)
        if (values[f] !== undefined) throw new UsageError(`--${f} is for --http only`);
    if (!values.model)
      for (const f of ['protocol', 'max-turns', 'temperature', 'model-timeout-ms', 'trajectory', 'no-save'] as const)
        if (values[f] !== undefined) throw new UsageError(`--${f} needs --model`);
    if (values['no-save'] && values.trajectory) throw new UsageError('give one of --trajectory and --no-save');
    const protocol = values.protocol ?? 'skyrl';
    if (!(ASK_PROTOCOL_NAMES as readonly string[]).includes(protocol))
      throw new UsageError(`--protocol must be one of ${ASK_PROTOCOL_NAMES.join(', ')}, got '${protocol}'`);
    const limits: McpLimits = { ...DEFAULT_MCP_LIMITS };
    let port: number, jobs: number, maxTurns: number | undefined, modelTimeoutMs: number;
    const sampling: SamplingOptions = {};
    try {
      for (const [flag, key] of Object.entries(LIMIT_FLAGS))
        limits[key] = positiveInt(flag, (values as Record<string, unknown>)[flag] as string | undefined, L[key]);
      port = values.port === '0' ? 0 : positiveInt('port', values.port, DEFAULT_MCP_PORT);
      if (port > 65535) throw new Error(`--port must be at most 65535, got ${port}`);
      jobs = positiveInt('jobs', values.jobs, 2);
      maxTurns = values['max-turns'] === undefined ? undefined : positiveInt('max-turns', values['max-turns'], 0);
      modelTimeoutMs = positiveInt('model-timeout-ms', values['model-timeout-ms'], DEFAULT_MODEL_TIMEOUT_MS);
      if (values.temperature !== undefined) {
        const t = Number(values.temperature);
        if (values.temperature.trim() === '' || !Number.isFinite(t) || t < 0)
          throw new Error(`--temperature must be a number >= 0, got '${values.temperature}'`);
        sampling.temperature = t;
      }
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (limits.maxChars < 200) throw new UsageError('--max-chars must be at least 200');
    if (limits.maxSchemaChars < 200) throw new UsageError('--max-schema-chars must be at least 200');
    const token = values['token-file'] === undefined ? null : readTokenFile(io.cwd, values['token-file']);

    let databases: ServedDatabases;
    try {
      databases = new ServedDatabases(resolve(io.cwd, values['db-dir'] ?? '.'));
    } catch (err) {
      return badInput(io, (err as Error).message);
    }
    let agent: McpAgent | null = null;
    if (values.model) {
      try {
        agent = {
          model: await createModel(values.model, { cwd: io.cwd }),
          spec: values.model,
          protocol: protocol as ProtocolName,
          maxTurns,
          sampling,
          modelTimeoutMs,
          saveTo: values['no-save']
            ? null
            : values.trajectory
              ? resolve(io.cwd, values.trajectory)
              : trajectoryStorePath(io.cwd),
        };
      } catch (err) {
        return badInput(
          io,
          err instanceof ModelError && err.kind !== 'bad-spec'
            ? `the model could not be loaded: ${err.message}`
            : (err as Error).message,
        );
      }
    }
    const pool = createSqlPool({ size: jobs });
    const ctx: McpToolContext = { databases, pool, limits, agent, cwd: io.cwd };
    const version = process.env.QUARRY_VERSION ?? 'dev';
    try {
      if (values.http) {
        let http;
        try {
          http = await startMcpHttp({
            host: values.host ?? '127.0.0.1',
            port,
            token,
            allowHosts: values['allow-host'] ?? [],
            maxFieldChars: limits.maxSqlChars,
            makeServer: () => createMcpServer(ctx, version),
            onError: (err) => io.stderr.write(`quarry mcp: ${err.message}\n`),
          });
        } catch (err) {
          return badInput(io, (err as Error).message);
        }
        io.stdout.write(`quarry mcp listening on ${http.url}\n`);
        io.stderr.write(`serving ${databases.root}${token ? '; bearer token required' : ''}; Ctrl-C stops\n`);
        await signalled().stopped;
        await http.close();
      } else {
        const server = createMcpServer(ctx, version);
        const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: 16 * 2 ** 20 });
        io.stderr.write(`quarry mcp: serving ${databases.root} over stdio\n`);
        const closed = new Promise<void>((done) => {
          transport.onclose = () => done();
          process.stdin.once('end', () => done());
          process.stdin.once('close', () => done());
        });
        await server.connect(transport);
        const signal = signalled();
        await Promise.race([closed, signal.stopped]);
        signal.off();
        await server.close();
      }
      return EXIT.ok;
    } finally {
      await pool.close();
      await agent?.model.close();
    }
  },
};

/** Resolves on the first Ctrl-C, TERM or HUP; `off` stops listening. */
function signalled(): { stopped: Promise<void>; off: () => void } {
  let off = () => {};
  const stopped = new Promise<void>((done) => {
    const stop = () => {
      off();
      done();
    };
    off = () => {
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(s, stop);
    };
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, stop);
  });
  return { stopped, off };
}

function badInput(io: CliIO, message: string): number {
  io.stderr.write(`quarry mcp: ${message}\n`);
  return EXIT.badInput;
}
