// `quarry serve-env`: serves Quarry's environment and reward panels over HTTP for trainers (verl, SkyRL, TRL through
// quarry_trainer). Prints `quarry env server listening on http://HOST:PORT` as its first stdout line (scripts wait
// for it), logs requests that fail to stderr, and stops cleanly on Ctrl-C / TERM / HUP.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command } from '../command';
import { UsageError, EXIT } from '../command';
import { readTokenFile } from '../tokenFile';
import { positiveInt } from '../../core/db/execOptions';
import { startEnvServer } from '../../app/envService/server';
import { DEFAULT_LIMITS, type ServiceLimits } from '../../app/envService/limits';

const usage = `Usage: quarry serve-env [--host 127.0.0.1] [--port N|0] --db-dir DIR... [--token-file F] [--jobs N]
                        [--max-episodes N] [--idle-s S] [--panel-dir DIR...] [--allow-host NAME[:PORT]...]
                        [--max-timeout-ms N] [--max-rows N] [--max-turns N] [--max-batch N]
                        [--max-field-chars N] [--max-in-flight N] [--test-suite TSDIR]

Serves the agent environment (episodes step by step), the reward panels, sandboxed SQL and ODT comparisons as JSON
over HTTP/1.1 for training engines; routes in GET /v1/openapi.json, usage in docs/training.md.

  --host         address to bind (default 127.0.0.1; any other needs --token-file)
  --port         port (default 0: a free one, printed on the first line)
  --db-dir DIR   a folder whose databases may be used (repeatable); nothing outside them is opened
  --token-file F a file holding the bearer token every request must send (Authorization: Bearer …)
  --jobs N       SQL worker threads (default 2)
  --max-episodes N  open episodes at once before 429 (default 1024)
  --idle-s S     an untouched episode expires after S seconds (default 600)
  --panel-dir DIR  a folder whose panel files (.json, at most 1 MiB, named relative to it) clients may name as
                 "panel" (repeatable); without it only the built-in panels are served
  --test-suite TSDIR  a test suite from quarry testsuite build: the panels' execution terms count an answer right
                 only if it matches the gold on every TSDIR/<db_id>/*.sqlite too (db_id: the episode's database name);
                 a panel file's "exec": {"testSuite": true} requires it, false turns it off. Only this flag names the
                 folder; requests and panel files cannot
  --allow-host NAME[:PORT]  another Host name to answer to (repeatable; no port: any port). On loopback the server
                 answers only to 127.0.0.1, localhost and [::1] with its port (an ssh tunnel on another local port
                 needs e.g. --allow-host localhost:9000); off loopback, with its token, to any Host
Server-side maxima (a client asking for more gets the maximum; longer text or batches get a 413):
  --max-timeout-ms N  longest a statement may run, a client's timeoutMs included
                 (default ${DEFAULT_LIMITS.maxTimeoutMs}; rewards use the smaller of 30000 and it)
  --max-rows N   most rows an /v1/execute answer keeps, a client's maxRows included (default ${DEFAULT_LIMITS.maxRows})
  --max-turns N  most turns an episode may take (maxTurns), a turnBudget may name, a scored trajectory may hold
                 (plus its final call), and history items an episode may carry (default ${DEFAULT_LIMITS.maxTurns})
  --max-batch N  most items in one batch request (default ${DEFAULT_LIMITS.maxBatch})
  --max-field-chars N  longest text in a body: a question, SQL, an action, a key…
                 (default ${DEFAULT_LIMITS.maxFieldChars})
  --max-in-flight N  request items served at once across all clients before a 429
                 (default ${DEFAULT_LIMITS.maxInFlight})

Bodies must be sent as Content-Type: application/json (415 otherwise); a request from a web page (an Origin header
naming another site) is refused (403); a client that disconnects cancels the statements it is waiting on.

Exit 0 when stopped by a signal, 2 on bad input (no --db-dir, a non-directory, a token file that cannot be read,
a non-loopback host without a token, a --panel-dir or --test-suite that is not a folder).`;

/** The --max-* flags and the ServiceLimits field each sets. */
const LIMIT_FLAGS = {
  'max-timeout-ms': 'maxTimeoutMs',
  'max-rows': 'maxRows',
  'max-turns': 'maxTurns',
  'max-batch': 'maxBatch',
  'max-field-chars': 'maxFieldChars',
  'max-in-flight': 'maxInFlight',
} as const satisfies Record<string, keyof ServiceLimits>;

export const serveEnvCommand: Command = {
  name: 'serve-env',
  summary: 'Serve the environment and reward panels over HTTP for trainers (verl, SkyRL, TRL)',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'db-dir': { type: 'string', multiple: true },
        'token-file': { type: 'string' },
        jobs: { type: 'string' },
        'max-episodes': { type: 'string' },
        'idle-s': { type: 'string' },
        'panel-dir': { type: 'string', multiple: true },
        'allow-host': { type: 'string', multiple: true },
        'test-suite': { type: 'string' },
        ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((f) => [f, { type: 'string' as const }])),
      },
    });
    const dbDirs = (values['db-dir'] ?? []).map((d) => resolve(io.cwd, d));
    if (dbDirs.length === 0) throw new UsageError('--db-dir DIR is required (repeat it for several folders)');
    let port: number, jobs: number, maxEpisodes: number, idleS: number;
    const limits: Partial<ServiceLimits> = {};
    try {
      port = values.port === undefined || values.port === '0' ? 0 : positiveInt('port', values.port, 0);
      if (port > 65535) throw new Error(`--port must be at most 65535, got ${port}`);
      jobs = positiveInt('jobs', values.jobs, 2);
      maxEpisodes = positiveInt('max-episodes', values['max-episodes'], 1024);
      idleS = positiveInt('idle-s', values['idle-s'], 600);
      for (const [flag, key] of Object.entries(LIMIT_FLAGS)) {
        const given = (values as Record<string, unknown>)[flag] as string | undefined;
        limits[key] = positiveInt(flag, given, DEFAULT_LIMITS[key]);
      }
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const token = values['token-file'] === undefined ? null : readTokenFile(io.cwd, values['token-file']);
    let server;
    try {
      server = await startEnvServer({
        host: values.host ?? '127.0.0.1',
        port,
        dbDirs,
        token,
        jobs,
        maxEpisodes,
        idleMs: idleS * 1000,
        panelDirs: (values['panel-dir'] ?? []).map((d) => resolve(io.cwd, d)),
        allowHosts: values['allow-host'] ?? [],
        testSuite: values['test-suite'] === undefined ? undefined : resolve(io.cwd, values['test-suite']),
        limits,
        version: process.env.QUARRY_VERSION ?? 'dev',
      });
    } catch (err) {
      io.stderr.write(`quarry serve-env: ${(err as Error).message}\n`);
      return EXIT.badInput;
    }
    io.stdout.write(`quarry env server listening on ${server.url}\n`);
    io.stderr.write(
      `databases from ${dbDirs.join(', ')}` +
        `${values['test-suite'] ? `; answers checked over the test suite ${values['test-suite']}` : ''}` +
        `${token ? '; bearer token required' : ''}; Ctrl-C stops\n`,
    );
    await new Promise<void>((done) => {
      const stop = () => {
        for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(s, stop);
        done();
      };
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, stop);
    });
    await server.close();
    io.stderr.write('quarry serve-env: stopped\n');
    return EXIT.ok;
  },
};
