// `quarry exec`: one read-only statement in the sandbox, its result rendered the way an agent would see it.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command } from '../command';
import { UsageError } from '../command';
import { createSqlPool, renderObservation, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_ROWS } from '../../core/db';
import { positiveInt, observationFormat, exitCodeOf } from '../../core/db/execOptions';
import { explainQueryPlan, renderPlanText } from '../../core/db/queryPlan';

const usage =
  `Usage: quarry exec --db FILE --sql TEXT [--timeout-ms ${DEFAULT_TIMEOUT_MS}] [--max-rows ${DEFAULT_MAX_ROWS}] ` +
  `[--format df|table|json|text] [--plan [--json]]

Runs one read-only SQL statement in the sandbox and prints what a model would observe.
With --plan the statement is not run: its EXPLAIN QUERY PLAN (through the same read-only guard) is printed as an
indented tree with row counts and plain-language warnings; --json prints the plan's tree and warnings as JSON.
Exit codes: 0 ok, 1 SQL error or resource cap hit, 2 bad input (usage, not a database), ` +
  `3 rejected as not read-only, 4 timed out.`;

export const execCommand: Command = {
  name: 'exec',
  summary: 'Run one read-only SQL statement in the sandbox and print the observation',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        db: { type: 'string' },
        sql: { type: 'string' },
        'timeout-ms': { type: 'string' },
        'max-rows': { type: 'string' },
        format: { type: 'string' },
        plan: { type: 'boolean' },
        json: { type: 'boolean' },
      },
    });
    if (!values.db) throw new UsageError('--db FILE is required');
    if (values.sql === undefined) throw new UsageError('--sql TEXT is required');
    if (values.json && !values.plan) throw new UsageError('--json goes with --plan (use --format json for rows)');
    let timeoutMs: number, maxRows: number, format;
    try {
      timeoutMs = positiveInt('timeout-ms', values['timeout-ms'], DEFAULT_TIMEOUT_MS);
      maxRows = positiveInt('max-rows', values['max-rows'], DEFAULT_MAX_ROWS);
      format = observationFormat(values.format);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const pool = createSqlPool({ size: 1, spares: 0 });
    try {
      if (values.plan) {
        const r = await explainQueryPlan(pool, resolve(io.cwd, values.db), values.sql, { timeoutMs });
        if (!r.ok && r.openErrorKind) io.stderr.write(`quarry exec: ${r.error}\n`);
        else if (values.json) {
          const out = r.ok ? { ok: true, ...r.plan } : { ok: false, errorClass: r.errorClass, error: r.error };
          io.stdout.write(JSON.stringify(out) + '\n');
        } else io.stdout.write((r.ok ? renderPlanText(r.plan) : r.error) + '\n');
        return exitCodeOf(r.ok ? { ok: true, errorClass: null } : r);
      }
      const result = await pool.exec({ db: resolve(io.cwd, values.db), sql: values.sql, timeoutMs, maxRows });
      // The observation (errors included) is the command's output; only "this is not a database" is a usage problem.
      if (result.openErrorKind) io.stderr.write(`quarry exec: ${result.error}\n`);
      else io.stdout.write(renderObservation(result, { format }) + '\n');
      return exitCodeOf(result);
    } finally {
      await pool.close();
    }
  },
};
