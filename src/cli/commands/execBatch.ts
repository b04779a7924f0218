// `quarry exec-batch`: a JSONL file of read-only statements run across the sandbox's worker pool, one result line per
// input line in input order (the record /v1/execute returns too), streamed with bounded memory and output.
import { parseArgs } from 'node:util';
import { readFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { resolve, dirname, isAbsolute } from 'node:path';
import type { Command } from '../command';
import { UsageError } from '../command';
import { createSqlPool, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_ROWS } from '../../core/db';
import type { ExecRequest, ExecResult } from '../../core/db';
import { failure } from '../../core/db/runStatement';
import { positiveInt, observationFormat } from '../../core/db/execOptions';
import { cpus } from 'node:os';
import { checkOutputPath, OutputRefused } from '../../core/util/outputPath';
import { execRecord } from '../../core/db/execRecord';

/** Output past which the remaining statements are not run but answered with a `resource` line. */
const MAX_BATCH_OUTPUT_BYTES = 2 ** 30;

const usage =
  `Usage: quarry exec-batch --in FILE.jsonl --out FILE.jsonl [--jobs N] [--timeout-ms ${DEFAULT_TIMEOUT_MS}] ` +
  `[--max-rows ${DEFAULT_MAX_ROWS}] ` +
  `[--format df|table|json|text]

Runs many read-only statements across a pool of sandboxed workers.
Input lines: {"id": ..., "db": "path.sqlite", "sql": "SELECT ..."}; a relative db path is resolved against the
directory of the input file. Output lines, in input order: {"id", "ok", "errorClass", "error", "columns", "rows",
"rowCount", "truncated", "observation", "ms"}. A malformed line yields an output line with its error.
Lines are written as statements finish (each line whole, in input order), so a run that is killed keeps every line
it finished; the output stops at ${MAX_BATCH_OUTPUT_BYTES / 2 ** 30} GiB, the statements past it get a "resource" line.
--jobs defaults to the number of CPUs. Exit code 0 unless the options or files are wrong (2); 128+N when stopped by
signal N (after closing the file and the workers).`;

type Line = { id: unknown; req: ExecRequest } | { id: unknown; error: string };

function parseLine(
  text: string,
  lineNo: number,
  dbPath: (db: string) => string,
  common: Omit<ExecRequest, 'db' | 'sql'>,
): Line {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    return { id: null, error: `line ${lineNo}: not valid JSON (${(err as Error).message})` };
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj))
    return { id: null, error: `line ${lineNo}: expected a JSON object` };
  const o = obj as Record<string, unknown>;
  const id = o.id ?? null;
  if (typeof o.db !== 'string' || o.db === '') return { id, error: `line ${lineNo}: "db" must be a non-empty string` };
  if (typeof o.sql !== 'string') return { id, error: `line ${lineNo}: "sql" must be a string` };
  return { id, req: { ...common, db: dbPath(o.db), sql: o.sql } };
}

export const execBatchCommand: Command = {
  name: 'exec-batch',
  summary: 'Run a JSONL file of read-only SQL statements across a worker pool',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        in: { type: 'string' },
        out: { type: 'string' },
        jobs: { type: 'string' },
        'timeout-ms': { type: 'string' },
        'max-rows': { type: 'string' },
        format: { type: 'string' },
      },
    });
    if (!values.in) throw new UsageError('--in FILE.jsonl is required');
    if (!values.out) throw new UsageError('--out FILE.jsonl is required');
    let jobs: number, timeoutMs: number, maxRows: number, format;
    try {
      jobs = positiveInt('jobs', values.jobs, cpus().length);
      timeoutMs = positiveInt('timeout-ms', values['timeout-ms'], DEFAULT_TIMEOUT_MS);
      maxRows = positiveInt('max-rows', values['max-rows'], DEFAULT_MAX_ROWS);
      format = observationFormat(values.format);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const inPath = resolve(io.cwd, values.in);
    let text: string;
    try {
      text = readFileSync(inPath, 'utf8');
    } catch (err) {
      io.stderr.write(`quarry exec-batch: cannot read ${inPath}: ${(err as Error).message}\n`);
      return 2;
    }
    const lines = text
      .split('\n')
      .map((l, i) => ({ l: l.trim(), n: i + 1 }))
      .filter((x) => x.l !== '');
    // A batch names few databases many times: each path is resolved once.
    const resolved = new Map<string, string>();
    const dbPath = (db: string): string => {
      let p = resolved.get(db);
      if (p === undefined) resolved.set(db, (p = isAbsolute(db) ? db : resolve(dirname(inPath), db)));
      return p;
    };
    const parsed = lines.map((x) => parseLine(x.l, x.n, dbPath, { timeoutMs, maxRows }));

    const started = performance.now();
    const showProgress = (io.stderr as { isTTY?: boolean }).isTTY === true;
    let fd: number;
    try {
      // The output never replaces the input, a database, or a file that is not an earlier exec-batch output.
      checkOutputPath(resolve(io.cwd, values.out), {
        inputs: [inPath],
        kind: 'exec-batch output',
        sameKind: (line) => {
          try {
            const o = JSON.parse(line) as object;
            return 'errorClass' in o && 'observation' in o;
          } catch {
            return false;
          }
        },
      });
      fd = openSync(resolve(io.cwd, values.out), 'w');
    } catch (err) {
      io.stderr.write(
        `quarry exec-batch: ` +
          `${err instanceof OutputRefused ? err.message : `cannot write ${values.out}: ${(err as Error).message}`}\n`,
      );
      return 2;
    }
    // Each worker holds up to 8 statements, so it runs the next one without waiting for this process in between (and
    // keeps working while this process renders and writes).
    const pool = createSqlPool({ size: jobs, pipeline: 8 });
    // Results are written in input order as soon as they are contiguous; a window of requests in flight keeps the
    // results held in memory (each capped by the sandbox) bounded however long the batch is.
    const window = jobs * 16;
    const held = new Map<number, ExecResult>();
    const results: { ok: boolean; errorClass: string | null }[] = [];
    let nextToWrite = 0;
    let nextToStart = 0;
    let bytes = 0;
    let stoppedBy: NodeJS.Signals | null = null;
    const flushContiguous = (): void => {
      // The lines ready now go out in one write (each whole); a batch rarely has just one ready at a time.
      let out = '';
      while (held.has(nextToWrite)) {
        const r = held.get(nextToWrite)!;
        held.delete(nextToWrite);
        // The same record the environment service's /v1/execute returns (core/db/execRecord.ts).
        const line = JSON.stringify(execRecord(parsed[nextToWrite].id, r, format)) + '\n';
        out += line;
        bytes += Buffer.byteLength(line);
        results.push({ ok: r.ok, errorClass: r.errorClass });
        nextToWrite++;
        if (showProgress && (nextToWrite % 50 === 0 || nextToWrite === parsed.length)) {
          io.stderr.write(`\r${nextToWrite}/${parsed.length}`);
        }
      }
      if (out !== '') writeSync(fd, out);
    };
    const onSignal = (sig: NodeJS.Signals): void => {
      stoppedBy = sig;
      void pool.close();
    };
    const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
    for (const sig of signals) process.on(sig, onSignal);
    try {
      await new Promise<void>((done) => {
        let inFlight = 0;
        const startMore = (): void => {
          while (!stoppedBy && inFlight < window && nextToStart < parsed.length) {
            const i = nextToStart++;
            const p = parsed[i];
            if (!('req' in p)) {
              held.set(i, failure('sql', p.error, 0));
              continue;
            }
            if (bytes >= MAX_BATCH_OUTPUT_BYTES) {
              held.set(
                i,
                failure(
                  'resource',
                  `not run: the output reached the batch cap of ${MAX_BATCH_OUTPUT_BYTES / 2 ** 30} GiB`,
                  0,
                ),
              );
              continue;
            }
            inFlight++;
            // A request the signal's pool.close() cut short is not a result: it is left out, and so is all after it.
            pool
              .exec(p.req)
              .then(
                (r) => {
                  held.set(i, r);
                },
                (err: Error) => {
                  if (!stoppedBy) held.set(i, failure('sql', err.message, 0));
                },
              )
              .finally(() => {
                inFlight--;
                flushContiguous();
                startMore();
              });
          }
          flushContiguous();
          if ((inFlight === 0 && nextToStart >= parsed.length) || (stoppedBy && inFlight === 0)) done();
        };
        startMore();
      });
      if (showProgress) io.stderr.write('\n');
    } finally {
      for (const sig of signals) process.off(sig, onSignal);
      closeSync(fd);
      await pool.close();
    }
    const wall = (performance.now() - started) / 1000;
    if (stoppedBy) {
      io.stderr.write(
        `quarry exec-batch: stopped by ${stoppedBy} after ${results.length} of ${parsed.length} statements; ` +
          `the ${results.length} finished lines are in ${values.out}\n`,
      );
      return 128 + (stoppedBy === 'SIGINT' ? 2 : stoppedBy === 'SIGHUP' ? 1 : 15);
    }
    const errors = results.filter((r) => !r.ok).length;
    const timeouts = results.filter((r) => r.errorClass === 'timeout').length;
    io.stdout.write(
      `${results.length} queries, ${errors} errors, ${timeouts} timeouts, ${wall.toFixed(2)} s, ` +
        `${(results.length / Math.max(wall, 1e-9)).toFixed(1)} queries/s\n`,
    );
    return 0;
  },
};
