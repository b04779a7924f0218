// `quarry ask`: one question, one agent episode, shown live — the model's text as it streams, the SQL it runs and
// what it observes — then the final SQL and its result. Ctrl-C cancels the episode; the trajectory is still written.
// The question runs through the same use case as the editor's (src/app/ask.ts), with the same save policy.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { createSqlPool, renderObservation, assertSqliteFile } from '../../core/db';
import { positiveInt } from '../../core/db/execOptions';
import { EpisodeSetupError, type EpisodeEvent } from '../../core/agent/loop';
import { ASK_PROTOCOL_NAMES, getProtocol } from '../../core/agent/protocols';
import type { Protocol } from '../../core/agent/protocol';
import { createModel } from '../../core/models';
import { ModelError, type ChatModel, type SamplingOptions } from '../../core/models/types';
import { DEFAULT_MAX_RESPONSE_CHARS } from '../../core/models/openai';
import { TrajectoryWriter, type TrajectoryRecord } from '../../core/trajectories';
import type { ProtocolName } from '../../core/agent/types';
import { ask, runFinalSql } from '../../app/ask';
import { DEFAULT_TRAJECTORY_STORE, trajectoryStorePath } from '../../app/trajectoryStore';

const ASK_PROTOCOLS: readonly string[] = ASK_PROTOCOL_NAMES;
const DEFAULT_MODEL_TIMEOUT_MS = 120_000;

const usage =
  `Usage: quarry ask --db FILE --model SPEC [--protocol ${ASK_PROTOCOL_NAMES.join('|')}] [--max-turns N]
                  [--trajectory OUT.jsonl | --no-save] [--temperature T] [--timeout-ms N] ` +
  `[--max-response-chars N] "question"

Answers a question about a SQLite database with a multi-turn agent: the model explores the database with read-only
SQL in the sandbox and gives a final query, which is then run and shown as a table.

  --db FILE            the SQLite database
  --model SPEC         openai:<baseURL>#<model> (any OpenAI-compatible server) or onnx:<dir>
  --protocol NAME      agent protocol (default skyrl)
  --max-turns N        turn budget (default: the protocol's own)
  --trajectory FILE    append the episode's trajectory record (JSONL) to FILE, also when cancelled or failed
                       (default: ${DEFAULT_TRAJECTORY_STORE} in the working directory, as the editor does)
  --no-save            do not save the trajectory
  --temperature T      sampling temperature (0 = greedy; default: the server's)
  --timeout-ms N       limit of each model call, ms (default ${DEFAULT_MODEL_TIMEOUT_MS}); SQL statements ` +
  `keep the sandbox cap
  --max-response-chars N  the most characters of one model response that are read (default ` +
  `${DEFAULT_MAX_RESPONSE_CHARS});
                       past it the turn keeps what came before and is marked over-long

Exit codes: 0 answered (the final SQL ran), 1 no answer, episode error or final SQL failed, 2 bad input (usage, not a
database, bad model spec or unloadable model, unknown protocol). Ctrl-C cancels the episode (exit 1); ` +
  `a second Ctrl-C quits at once.`;

export const askCommand: Command = {
  name: 'ask',
  summary: 'Answer a question about a database with a multi-turn agent, shown live',
  usage,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        db: { type: 'string' },
        model: { type: 'string' },
        protocol: { type: 'string' },
        'max-turns': { type: 'string' },
        trajectory: { type: 'string' },
        temperature: { type: 'string' },
        'timeout-ms': { type: 'string' },
        'max-response-chars': { type: 'string' },
        'no-save': { type: 'boolean' },
      },
    });
    if (!values.db) throw new UsageError('--db FILE is required');
    if (values['no-save'] && values.trajectory)
      throw new UsageError('--trajectory and --no-save contradict each other: give one');
    if (!values.model) throw new UsageError('--model SPEC is required');
    if (positionals.length !== 1 || positionals[0].trim() === '') {
      throw new UsageError(
        positionals.length === 0
          ? 'the question is required'
          : `give the question as one argument (quote it); got ${positionals.length}`,
      );
    }
    const question = positionals[0].trim();
    const protocolName = values.protocol ?? 'skyrl';
    if (!ASK_PROTOCOLS.includes(protocolName)) {
      throw new UsageError(
        `unknown protocol '${protocolName}'; quarry ask supports ${ASK_PROTOCOLS.join(', ')}` +
          (protocolName === 'progress' ? ' (progress needs gold-SQL feedback)' : ''),
      );
    }
    let maxTurns: number | undefined, modelTimeoutMs: number, maxResponseChars: number;
    const sampling: SamplingOptions = {};
    try {
      maxTurns = values['max-turns'] === undefined ? undefined : positiveInt('max-turns', values['max-turns'], 0);
      modelTimeoutMs = positiveInt('timeout-ms', values['timeout-ms'], DEFAULT_MODEL_TIMEOUT_MS);
      maxResponseChars = positiveInt('max-response-chars', values['max-response-chars'], DEFAULT_MAX_RESPONSE_CHARS);
      if (values.temperature !== undefined) sampling.temperature = temperature(values.temperature);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const dbPath = resolve(io.cwd, values.db);
    try {
      assertSqliteFile(dbPath);
    } catch (err) {
      return badInput(io, (err as Error).message);
    }
    let protocol: Protocol;
    try {
      protocol = getProtocol(protocolName);
    } catch (err) {
      return badInput(io, (err as Error).message);
    }
    let model: ChatModel;
    try {
      model = await createModel(values.model, { cwd: io.cwd, maxResponseChars });
    } catch (err) {
      // A spec that names nothing usable (bad syntax, a missing model directory) is the caller's input.
      return badInput(
        io,
        err instanceof ModelError && err.kind !== 'bad-spec'
          ? `the model could not be loaded: ${err.message}`
          : (err as Error).message,
      );
    }
    const saveTo = values['no-save']
      ? null
      : values.trajectory
        ? resolve(io.cwd, values.trajectory)
        : trajectoryStorePath(io.cwd);
    if (values.trajectory && saveTo) {
      // A file named on the command line that cannot be written is bad input, said before the model runs.
      try {
        await (await TrajectoryWriter.open(saveTo)).close();
      } catch (err) {
        await model.close();
        return badInput(io, `cannot write the trajectory to ${values.trajectory}: ${(err as Error).message}`);
      }
    }

    const pool = createSqlPool({ size: 1, spares: 1 });
    const cancel = new AbortController();
    const onSigint = () => {
      if (cancel.signal.aborted) process.exit(130);
      io.stderr.write('\nquarry ask: cancelling (Ctrl-C again to quit at once)\n');
      cancel.abort();
    };
    // TERM and HUP (a job runner, a closed terminal) stop the run the same way: what is finished is kept.
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, onSigint);
    try {
      const show = new LiveView(io);
      let outcome;
      try {
        outcome = await ask({
          question,
          dbPath,
          protocol: protocol.name as ProtocolName,
          config: maxTurns === undefined ? {} : { maxTurns },
          model,
          pool,
          sampling,
          signal: cancel.signal,
          modelTimeoutMs,
          saveTo,
          meta: { source: 'cli-ask' },
          runFinal: false,
          onEvent: (e) => show.event(e),
        });
      } catch (err) {
        if (err instanceof EpisodeSetupError) return badInput(io, err.message);
        throw err;
      }
      const { record } = outcome;
      if (outcome.savedTo) io.stderr.write(`trajectory appended to ${values.trajectory ?? outcome.savedTo}\n`);
      if (outcome.saveError) io.stderr.write(`quarry ask: ${outcome.saveError}\n`);
      io.stderr.write(summary(record) + '\n');
      if (record.end === 'cancelled') return failed(io, 'cancelled');
      if (record.end === 'error') return failed(io, record.error ?? 'the episode failed');
      if (record.finalSql === null)
        return failed(
          io,
          record.end === 'budget'
            ? `no answer within ${record.protocol.budget ?? record.protocol.config.maxTurns} turns`
            : `no answer (${record.end})`,
        );

      io.stdout.write(`\n── final SQL ──\n${record.finalSql}\n\n── result ──\n`);
      const final = await runFinalSql(pool, dbPath, record.finalSql, {
        timeoutMs: finalTimeout(record),
        signal: cancel.signal,
      });
      if (final === null) return failed(io, 'cancelled while running the final SQL');
      io.stdout.write(renderObservation(final, { format: 'table' }) + '\n');
      if (!final.ok) return failed(io, `the final SQL failed (${final.errorClass}): ${final.error}`);
      return EXIT.ok;
    } finally {
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(sig, onSigint);
      await pool.close();
      await model.close();
    }
  },
};

function finalTimeout(record: TrajectoryRecord): number | undefined {
  const t = record.protocol.config.timeoutMs;
  return typeof t === 'number' && t > 0 ? t : undefined;
}

function temperature(v: string): number {
  const t = Number(v);
  if (v.trim() === '' || !Number.isFinite(t) || t < 0)
    throw new Error(`--temperature must be a number >= 0, got '${v}'`);
  return t;
}

function badInput(io: CliIO, message: string): number {
  io.stderr.write(`quarry ask: ${message}\n`);
  return EXIT.badInput;
}

function failed(io: CliIO, message: string): number {
  io.stderr.write(`quarry ask: ${message}\n`);
  return 1;
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

function summary(r: TrajectoryRecord): string {
  return (
    `${r.end} after ${r.turns.length} turn${r.turns.length === 1 ? '' : 's'} in ${seconds(r.timings.totalMs)} ` +
    `(model ${seconds(r.timings.modelMs)}, database ${seconds(r.timings.envMs)}), ` +
    `${r.usage.promptTokens} prompt + ${r.usage.completionTokens} completion tokens`
  );
}

/** Prints the episode as it happens: turn headers, streamed text, the SQL being run, the observations. */
class LiveView {
  /** Text streamed so far in the current turn. */
  private streamed = '';
  private atLineStart = true;
  private budget = 0;

  constructor(private readonly io: CliIO) {}

  event(e: EpisodeEvent): void {
    switch (e.type) {
      case 'start':
        this.budget = e.budget;
        this.line(`quarry ask: ${e.protocol}, up to ${e.budget} turn${e.budget === 1 ? '' : 's'}`, this.io.stderr);
        break;
      case 'turn':
        this.streamed = '';
        this.line(
          `\n── turn ${e.index + 1}${e.finalCall ? ' · turns used up, final answer' : ` of ${this.budget}`} ──`,
        );
        break;
      case 'text':
        this.streamed += e.delta;
        this.write(e.delta);
        break;
      case 'action':
        // Whatever the stream did not show: the whole turn from a backend that does not stream, or the stop string
        // the server cut and the protocol restored.
        if (e.assistant.startsWith(this.streamed)) this.write(e.assistant.slice(this.streamed.length));
        this.endLine();
        if (e.action.kind === 'execute' && e.action.sql !== null) this.line(`▶ running: ${oneLine(e.action.sql)}`);
        else if (e.action.kind === 'invalid')
          this.line(`✗ invalid turn: ${e.action.problems.join('; ') || 'no action'}`);
        for (const p of e.action.kind !== 'invalid' ? e.action.problems : []) this.line(`  note: ${p}`);
        break;
      case 'exec':
        this.line(
          e.result.ok
            ? `  ${e.result.rowCount} row${e.result.rowCount === 1 ? '' : 's'} in ${e.result.ms.toFixed(1)} ms`
            : `  ${e.result.errorClass}: ${e.result.error}`,
        );
        break;
      case 'observation':
        for (const o of e.observations) this.line(o.content);
        break;
      case 'done':
        this.endLine();
        break;
    }
  }

  private write(text: string, stream: NodeJS.WritableStream = this.io.stdout): void {
    if (!text) return;
    stream.write(text);
    this.atLineStart = text.endsWith('\n');
  }

  private endLine(): void {
    if (!this.atLineStart) this.write('\n');
  }

  private line(text: string, stream: NodeJS.WritableStream = this.io.stdout): void {
    this.endLine();
    stream.write(text + '\n');
    this.atLineStart = true;
  }
}

function oneLine(sql: string): string {
  const flat = sql.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? flat.slice(0, 197) + '...' : flat;
}
