import { parseArgs } from 'node:util';
import { readFileSync, createWriteStream } from 'node:fs';
import { resolve, dirname, isAbsolute } from 'node:path';
import type { Command } from '../command';
import { UsageError } from '../command';
import { createSqlPool, renderObservation, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_ROWS } from '../../core/db';
import type { Cell, ExecRequest, ExecResult } from '../../core/db';
import { failure } from '../../core/db/runStatement';
import { positiveInt, observationFormat } from '../../core/db/execOptions';
import { cpus } from 'node:os';

const usage = `Usage: quarry exec-batch --in FILE.jsonl --out FILE.jsonl [--jobs N] [--timeout-ms ${DEFAULT_TIMEOUT_MS}] [--max-rows ${DEFAULT_MAX_ROWS}] [--format df|table|json|text]

Runs many read-only statements across a pool of sandboxed workers.
Input lines: {"id": ..., "db": "path.sqlite", "sql": "SELECT ..."}; a relative db path is resolved against the
directory of the input file. Output lines, in input order: {"id", "ok", "errorClass", "error", "columns", "rows",
"rowCount", "truncated", "observation", "ms"}. A malformed line yields an output line with its error.
--jobs defaults to the number of CPUs. Exit code 0 unless the options or files are wrong (2).`;

/** bigint → number when exact, else a string; blobs → a placeholder naming their size. */
function jsonCell(v: Cell): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return `<blob ${v.length} bytes>`;
  return v;
}

type Line = { id: unknown; req: ExecRequest } | { id: unknown; error: string };

function parseLine(text: string, lineNo: number, baseDir: string, common: Omit<ExecRequest, 'db' | 'sql'>): Line {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    return { id: null, error: `line ${lineNo}: not valid JSON (${(err as Error).message})` };
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return { id: null, error: `line ${lineNo}: expected a JSON object` };
  const o = obj as Record<string, unknown>;
  const id = o.id ?? null;
  if (typeof o.db !== 'string' || o.db === '') return { id, error: `line ${lineNo}: "db" must be a non-empty string` };
  if (typeof o.sql !== 'string') return { id, error: `line ${lineNo}: "sql" must be a string` };
  return { id, req: { ...common, db: isAbsolute(o.db) ? o.db : resolve(baseDir, o.db), sql: o.sql } };
}

export const execBatchCommand: Command = {
  name: 'exec-batch',
  summary: 'Run a JSONL file of read-only SQL statements across a worker pool',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv, strict: true, allowPositionals: false,
      options: {
        in: { type: 'string' }, out: { type: 'string' }, jobs: { type: 'string' },
        'timeout-ms': { type: 'string' }, 'max-rows': { type: 'string' }, format: { type: 'string' },
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
    const lines = text.split('\n').map((l, i) => ({ l: l.trim(), n: i + 1 })).filter((x) => x.l !== '');
    const parsed = lines.map((x) => parseLine(x.l, x.n, dirname(inPath), { timeoutMs, maxRows }));

    const started = performance.now();
    const showProgress = (io.stderr as { isTTY?: boolean }).isTTY === true;
    const pool = createSqlPool({ size: jobs });
    let results: ExecResult[];
    try {
      const reqs = parsed.flatMap((p) => ('req' in p ? [p.req] : []));
      const ran = await pool.execBatch(reqs, {
        onProgress: showProgress ? (done, total) => { if (done % 50 === 0 || done === total) io.stderr.write(`\r${done}/${total}`); } : undefined,
      });
      let k = 0;
      results = parsed.map((p) => ('req' in p ? ran[k++] : failure('sql', p.error, 0)));
      if (showProgress) io.stderr.write('\n');
    } finally {
      await pool.close();
    }
    const wall = (performance.now() - started) / 1000;

    const out = createWriteStream(resolve(io.cwd, values.out));
    const written = new Promise<void>((res, rej) => { out.on('finish', res); out.on('error', rej); });
    results.forEach((r, i) => {
      out.write(JSON.stringify({
        id: parsed[i].id, ok: r.ok, errorClass: r.errorClass, error: r.error, columns: r.columns,
        rows: r.rows.map((row) => row.map(jsonCell)), rowCount: r.rowCount, truncated: r.truncated,
        observation: renderObservation(r, { format }), ms: Math.round(r.ms * 1000) / 1000,
      }) + '\n');
    });
    out.end();
    try {
      await written;
    } catch (err) {
      io.stderr.write(`quarry exec-batch: cannot write ${values.out}: ${(err as Error).message}\n`);
      return 2;
    }
    const errors = results.filter((r) => !r.ok).length;
    const timeouts = results.filter((r) => r.errorClass === 'timeout').length;
    io.stdout.write(`${results.length} queries, ${errors} errors, ${timeouts} timeouts, ${wall.toFixed(2)} s, `
      + `${(results.length / Math.max(wall, 1e-9)).toFixed(1)} queries/s\n`);
    return 0;
  },
};
