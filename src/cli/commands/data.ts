// `quarry data`: training data for the engines. `rl` turns a benchmark-format dataset into verl's RL schema (Parquet
// and JSONL, with the curation filters of the papers); `sft` turns trajectories and labels into masked multi-turn
// conversations. docs/training.md ("Data") describes both and the engine settings that read them.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command, CliIO } from '../command';
import { EXIT, UsageError } from '../command';
import { positiveInt } from '../../core/db/execOptions';
import { DatasetError, parseDatasetSpec } from '../../core/datasets';
import { isProtocolName, PROTOCOL_NAMES } from '../../core/agent/protocols';
import { isKeepChoice, KEEP_CHOICES } from '../../core/training/difficulty';
import { DataInputError } from '../../app/data/errors';
import { makeRlData, RL_FILES } from '../../app/data/rl';
import { makeSftData, SFT_FILES } from '../../app/data/sft';
import { createProgress, type Progress } from '../progressBar';
import { runDistill, runSelfTaught } from './dataRounds';

const rlUsage = `quarry data rl --dataset spider|bird|sparc|cosql:FILE --db-dir D --protocol P [--max-turns N] --out DIR
              [--drop-empty-gold] [--difficulty RUN_DIR --keep ${KEEP_CHOICES.join('|')}] [--curriculum-bins N]
              [--strict] [--tools-in-template]`;
const sftUsage =
  'quarry data sft --trajectories F... [--labels FILE] [--correct-only] [--prefer-hard] [--limit N] --out DIR';

const distillUsage =
  'quarry data distill --dataset D:FILE --db-dir D --model TEACHER --protocol P --out DIR [--samples K] ' +
  '[--temperature T] [--max-turns N] [--limit N] [--jobs N] [--resume]';
const selfTaughtUsage =
  'quarry data self-taught --dataset D:FILE --db-dir D --model M --protocol P --out DIR [--samples 20] ' +
  '[--temperature 0.7] [--exclude PREV/self-taught.json] [--seed S] [--max-turns N] [--limit N] [--jobs N] [--resume]';

const usage = `Usage: ${rlUsage}
       ${sftUsage}
       ${distillUsage}
       ${selfTaughtUsage}

Writes training data (docs/training.md, "Data").
rl   one record per question in verl's RL schema (SkyRL reads it too): data_source "quarry/<dataset>", prompt (the
     protocol's opening messages with the database schema, built by the real environment), ability "text2sql",
     reward_model {style: "rule", ground_truth: <gold SQL>}, extra_info {index, db_id, db_path, question, hardness,
     protocol, max_turns, evidence, history}, agent_name (the verl agent loop: quarry_agent; tool_agent for mtir with
     --tools-in-template). Writes DIR/${RL_FILES.parquet}, DIR/${RL_FILES.jsonl} (the same records)
     and DIR/data.json (source files and their sha256, counts, filters, what was dropped and why).
  --protocol         ${PROTOCOL_NAMES.join(', ')}
  --max-turns        the turn budget the prompts announce (default: the protocol's own)
  gold queries that fail are always dropped (every rollout would score 0); --drop-empty-gold also drops golds
  whose result is empty (an empty answer would win for free) (MTIR-SQL §4.1)
  --difficulty       the --out directory of a \`quarry bench --samples G\` run (G >= 2) over the same dataset;
  --keep             all | hard-but-solvable (0 < pass@G < 1, ranked by SQL-Trail's S(q)) | unsolved (pass@G = 0:
                     SQL-Trail's exploration set) (App. A.6)
  --curriculum-bins  N levels, easiest first, by success count; questions every sample solved are dropped
                     (MTSQL-R1 §3.3.1); adds extra_info.curriculum_level and needs --difficulty
  --strict           refuse (exit 2) when a question's database is missing from --db-dir; by default its questions
                     are skipped, each missing database is named once on stderr, and data.json lists them (missing)
  --tools-in-template  mtir only: leave the tool's declaration (the system message) out of the prompt, for a trainer
                     whose chat template declares it (verl's tool agent loop passes tools=); data.json says so
                     (protocol.toolsDeclared); \`quarry train\` wants it for verl's tool loop, refuses it elsewhere
  the records are streamed (Parquet in row groups), so corpora of millions of questions fit in bounded memory
sft  one multi-turn conversation per usable trajectory, each message with "loss": true on the model's own turns
     (assistant), false on the prompt and every observation. Writes DIR/${SFT_FILES.jsonl}, DIR/${SFT_FILES.parquet} and
     DIR/data.json. A trajectory with a label follows it (correct: as generated; corrected SQL: answer rewritten;
     otherwise left out); one without needs an answered episode.
  --trajectories     one or more trajectory files (JSONL), e.g. a bench run's trajectories.jsonl
  --labels           a label store (.quarry/labels.sqlite)
  --correct-only     unlabeled trajectories must also return the gold's result with their final SQL
  --prefer-hard      hardest questions first (Spider hardness: extra, hard, medium, easy)
  --limit            keep the first N examples (after --prefer-hard's order)
distill      a teacher's \`quarry bench\` run into DIR/run (resumable), then its correct trajectories as SFT data,
             hardest first (SQL-Trail App. A.6)
self-taught  one round of MTSQL-R1's self-taught warm start (§3.2.2, Algorithm 1): N rollouts at T (default 20 at
             0.7) into DIR/run, S1 keep EX ∧ EM, S2 difficulty-aware reject sampling (easy or all-correct: up to 2
             short; else 3 long ones far apart), DIR/sft.jsonl, and DIR/self-taught.json listing the solved questions
             for the next round's --exclude (S4); train between rounds with quarry_trainer.train.sft (S3)
Files in DIR are replaced only when DIR/data.json shows an earlier run of the same kind wrote them.
Exit 0 when written, 2 on bad input.`;

function badInput(io: CliIO, sub: string, message: string): number {
  io.stderr.write(`quarry data ${sub}: ${message}\n`);
  return EXIT.badInput;
}

function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  try {
    return positiveInt(name, value, 0);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `gold-fails 3, empty-gold 254`: what data.json counts as left out, by reason. */
function droppedText(doc: Record<string, unknown>): string {
  const dropped = (doc.counts as { dropped: Record<string, number> }).dropped;
  return Object.entries(dropped)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

/** One progress bar per phase, on stderr. */
function phases(io: CliIO) {
  let current: { phase: string; bar: Progress } | null = null;
  return {
    update(phase: string, done: number, total: number) {
      if (current?.phase !== phase) {
        current?.bar.finish();
        current = { phase, bar: createProgress(io.stderr, total, { label: phase }) };
      }
      current.bar.update(done);
    },
    finish() {
      current?.bar.finish();
      current = null;
    },
  };
}

async function runRl(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      dataset: { type: 'string' },
      'db-dir': { type: 'string' },
      protocol: { type: 'string' },
      'max-turns': { type: 'string' },
      out: { type: 'string' },
      'drop-empty-gold': { type: 'boolean' },
      difficulty: { type: 'string' },
      keep: { type: 'string' },
      'curriculum-bins': { type: 'string' },
      strict: { type: 'boolean' },
      'tools-in-template': { type: 'boolean' },
    },
  });
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  for (const flag of ['dataset', 'db-dir', 'protocol', 'out'] as const)
    if (!values[flag]) throw new UsageError(`--${flag} is required`);
  const protocol = values.protocol!;
  if (!isProtocolName(protocol))
    throw new UsageError(`--protocol must be one of ${PROTOCOL_NAMES.join(', ')}, got '${protocol}'`);
  if ((values.difficulty === undefined) !== (values.keep === undefined)) {
    throw new UsageError(
      values.keep === undefined
        ? '--difficulty RUN_DIR needs --keep all|hard-but-solvable|unsolved'
        : '--keep needs --difficulty RUN_DIR (a `quarry bench --samples G` run)',
    );
  }
  if (values.keep !== undefined && !isKeepChoice(values.keep))
    throw new UsageError(`--keep must be one of ${KEEP_CHOICES.join(', ')}, got '${values.keep}'`);
  const maxTurns = intOption('max-turns', values['max-turns']);
  const bins = intOption('curriculum-bins', values['curriculum-bins']);
  if (bins !== undefined && values.difficulty === undefined)
    throw new UsageError(
      "--curriculum-bins needs --difficulty RUN_DIR: levels are cut by each question's success count",
    );

  let spec;
  try {
    spec = parseDatasetSpec(values.dataset!);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const outDir = resolve(io.cwd, values.out!);
  const progress = phases(io);
  try {
    const r = await makeRlData({
      dataset: spec.name,
      file: resolve(io.cwd, spec.file),
      dbDir: resolve(io.cwd, values['db-dir']!),
      protocol,
      maxTurns,
      outDir,
      dropEmptyGold: values['drop-empty-gold'] === true,
      difficulty:
        values.difficulty !== undefined
          ? { runDir: resolve(io.cwd, values.difficulty), keep: values.keep as never }
          : undefined,
      curriculumBins: bins,
      strict: values.strict === true,
      toolsDeclared: values['tools-in-template'] === true ? 'chat-template' : 'prompt',
      command: ['data', 'rl', ...argv],
      onProgress: (phase, done, total) => progress.update(phase === 'gold' ? 'gold SQL' : 'prompts', done, total),
    });
    progress.finish();
    const why = droppedText(r.doc);
    io.stdout.write(
      `wrote ${r.records} of ${r.questions} questions to ${resolve(outDir, RL_FILES.parquet)} and ${RL_FILES.jsonl}` +
        `${why ? ` (dropped: ${why})` : ''}; ${r.dataJson} describes the run\n`,
    );
    for (const w of r.warnings) io.stderr.write(`quarry data rl: warning: ${w}\n`);
    return EXIT.ok;
  } catch (err) {
    progress.finish();
    if (err instanceof DataInputError || err instanceof DatasetError) return badInput(io, 'rl', err.message);
    throw err;
  }
}

async function runSft(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      trajectories: { type: 'string', multiple: true },
      labels: { type: 'string' },
      'correct-only': { type: 'boolean' },
      'prefer-hard': { type: 'boolean' },
      limit: { type: 'string' },
      out: { type: 'string' },
    },
  });
  // `--trajectories a.jsonl b.jsonl`: the files after the flag arrive as positionals.
  if (!values.trajectories?.length) throw new UsageError('--trajectories F... is required');
  if (!values.out) throw new UsageError('--out DIR is required');
  const limit = intOption('limit', values.limit);
  const files = [...values.trajectories, ...positionals].map((f) => resolve(io.cwd, f));
  const progress = phases(io);
  try {
    const r = await makeSftData({
      trajectories: files,
      labels: values.labels !== undefined ? resolve(io.cwd, values.labels) : undefined,
      correctOnly: values['correct-only'] === true,
      preferHard: values['prefer-hard'] === true,
      limit,
      outDir: resolve(io.cwd, values.out),
      command: ['data', 'sft', ...argv],
      onProgress: (done, total) => progress.update('trajectories', done, total),
    });
    progress.finish();
    const why = droppedText(r.doc);
    io.stdout.write(
      `wrote ${r.examples} conversations from ${r.trajectories} trajectories to ` +
        `${resolve(io.cwd, values.out, SFT_FILES.jsonl)} and ${SFT_FILES.parquet}` +
        `${why ? ` (left out: ${why})` : ''}; ${r.dataJson} describes the run\n`,
    );
    for (const w of r.warnings) io.stderr.write(`quarry data sft: warning: ${w}\n`);
    return EXIT.ok;
  } catch (err) {
    progress.finish();
    if (err instanceof DataInputError) return badInput(io, 'sft', err.message);
    throw err;
  }
}

export const dataCommand: Command = {
  name: 'data',
  summary: "Write training data: RL prompts in verl's schema (rl), masked SFT conversations (sft)",
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === 'rl') return runRl(rest, io);
    if (sub === 'sft') return runSft(rest, io);
    if (sub === 'distill') return runDistill(rest, io);
    if (sub === 'self-taught') return runSelfTaught(rest, io);
    throw new UsageError(
      sub === undefined
        ? 'a subcommand is required: rl, sft, distill or self-taught'
        : `unknown subcommand '${sub}': expected rl, sft, distill or self-taught`,
    );
  },
};
