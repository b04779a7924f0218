// `quarry checkpoints load|unload|loaded|eval|compare`: checkpoints into the model registry (.quarry/models.json) and
// back out, evaluated with `quarry bench` and compared side by side (src/app/checkpoints).
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { choosePython } from '../../core/training/pythonEnv';
import { describeProvenance, ModelRegistry, ModelRegistryError } from '../../core/training/modelRegistry';
import { formatComparison } from '../../core/training/checkpointCompare';
import { loadCheckpoint, unloadModel, LoadError } from '../../app/checkpoints/load';
import { isServerKind, SERVER_KINDS, type ServerKind } from '../../app/checkpoints/serveCommand';
import { evaluateModel } from '../../app/checkpoints/evaluate';
import { serveHostOfJob } from '../../app/checkpoints/serveHost';
import { compareModels } from '../../app/checkpoints/compare';
import { positiveInt } from '../../core/db/execOptions';
import { createProgress } from '../progressBar';
import { repoRootOf } from '../repoRoot';

export const registryUsage = `       quarry checkpoints load CKPT_DIR [--job ID] [--as NAME] [--python PATH] [--json]
                               [--serve [--server transformers|vllm|sglang]
                                 [--ssh HOST [--remote-dir DIR] [--ssh-option OPT…] [--remote-env NAME=VALUE…]]]
       quarry checkpoints unload NAME [--ssh-option OPT…] [--forget]
       quarry checkpoints loaded [--json]
       quarry checkpoints eval NAME --dataset NAME:FILE --db-dir DIR --protocol P [--samples K] [--limit N] [--jobs N]
       quarry checkpoints compare NAME NAME… --dataset [NAME:]FILE [--json]

load     Registers a Hugging Face checkpoint in .quarry/models.json with its provenance (job, step, recipe, data hashes
         from run.json, base model). Default: exported to ONNX under .quarry/models/NAME/ and registered as onnx:DIR.
         --serve: an OpenAI-compatible server for it instead (transformers' own on a CPU-only host, the default here;
         vllm on GPUs), waited for, registered as openai:http://127.0.0.1:PORT/v1#MODEL. It runs on the host of
         --job's target (an ssh target: its host and ssh options, the checkpoint under the job's remote folder), or
         on --ssh HOST (the checkpoint at --remote-dir there); a remote one is reached through an ssh -N -L tunnel
         that is reopened when dropped. Either way greedy parity with transformers runs on fixed prompts; a
         divergence (first differing token) is reported and stored, and blocks nothing.
unload   Removes a model from the registry and stops its server and tunnel (exported files and evaluations stay). A
         process is signalled only when it is the one Quarry started (its start time, command line, process group
         and Quarry's id in its environment); otherwise unload says what it found, signals nothing and keeps the
         entry (--forget removes it without signalling). --ssh-option: the options of a remote server's host, when
         the ones it was loaded with are not kept in the workspace (only allow-listed -o/-p/-l/-i options are).
loaded   The registered models, with their provenance, parity and evaluations.
eval     quarry bench against a registered model; the report is stored with it (.quarry/models/NAME/evals/…).
compare  EX greedy / majority / pass@K by hardness side by side, from each model's latest evaluation on the dataset,
         and the questions whose greedy answers disagree.`;

function pythonFor(io: CliIO, flag: string | undefined) {
  return choosePython({
    flag,
    searchRoots: [io.cwd, repoRootOf(__dirname)].filter((d): d is string => d !== undefined),
  });
}

/** --remote-env K=V pairs as an object; a pair without '=' is a usage error. */
function remoteEnv(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs?.length) return undefined;
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`--remote-env takes NAME=VALUE, got '${p}'`);
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

export async function loadCmd(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      job: { type: 'string' },
      as: { type: 'string' },
      serve: { type: 'boolean' },
      server: { type: 'string' },
      ssh: { type: 'string' },
      'remote-dir': { type: 'string' },
      'ssh-option': { type: 'string', multiple: true },
      'remote-env': { type: 'string', multiple: true },
      python: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('give one checkpoint folder: quarry checkpoints load CKPT_DIR');
  const server = values.server ?? 'transformers';
  if (!isServerKind(server)) throw new UsageError(`--server must be one of ${SERVER_KINDS.join(', ')}`);
  if ((values.server || values.ssh) && !values.serve) throw new UsageError('--server and --ssh go with --serve');
  if ((values['ssh-option'] || values['remote-env'] || values['remote-dir']) && !values.ssh)
    throw new UsageError('--ssh-option, --remote-env and --remote-dir go with --ssh HOST');
  const python = pythonFor(io, values.python);
  const checkpoint = resolve(io.cwd, positionals[0]);
  try {
    // Served without --ssh: on the host of the checkpoint's job (its target), when the job is known.
    const fromJob = values.serve && !values.ssh && values.job ? serveHostOfJob(io.cwd, values.job, checkpoint) : null;
    if (fromJob?.host)
      io.stderr.write(`serving on ${fromJob.host}, the host of job ${values.job} (${fromJob.target})…\n`);
    const { model, cases } = await loadCheckpoint({
      workspace: io.cwd,
      checkpoint,
      name: values.as,
      jobId: values.job,
      python: python.path,
      repoRoot: repoRootOf(__dirname),
      serve: values.serve
        ? {
            kind: server as ServerKind,
            host: values.ssh ?? fromJob?.host,
            remoteCheckpoint: values['remote-dir'] ?? fromJob?.remoteCheckpoint,
            sshOptions: values['ssh-option'] ?? fromJob?.sshOptions,
            target: values.ssh ? undefined : fromJob?.host ? fromJob.target : undefined,
            remoteEnv: remoteEnv(values['remote-env']),
          }
        : null,
      onStage: (m) => io.stderr.write(`${m}…\n`),
    });
    if (values.json) {
      io.stdout.write(JSON.stringify({ model, cases }) + '\n');
    } else {
      io.stdout.write(`loaded ${model.name}: ${model.spec}\n  ${describeProvenance(model)}\n`);
      const p = model.parity;
      io.stdout.write(
        !p
          ? '  parity: not checked\n'
          : p.equal
            ? `  parity: all ${p.cases} prompts decode the same tokens as transformers (${p.against})\n`
            : `  parity: ${p.differing} of ${p.cases} prompts differ; case ${p.firstDivergence?.case} at token ` +
              `${p.firstDivergence?.position} ` +
              `(expected ${p.firstDivergence?.expected}, got ${p.firstDivergence?.got})\n`,
      );
      io.stdout.write(`  use it: quarry ask --model ${model.spec} …\n`);
    }
    return EXIT.ok;
  } catch (err) {
    const msg = (err as Error).message;
    if (err instanceof LoadError || err instanceof ModelRegistryError || /no job |target/.test(msg)) {
      io.stderr.write(`quarry checkpoints load: ${(err as Error).message}\n`);
      return EXIT.badInput;
    }
    throw err;
  }
}

export async function unloadCmd(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { 'ssh-option': { type: 'string', multiple: true }, forget: { type: 'boolean' } },
  });
  if (positionals.length !== 1) throw new UsageError('give one model name: quarry checkpoints unload NAME');
  try {
    const name = positionals[0];
    const { model, said, removed } = unloadModel(io.cwd, name, {
      sshOptions: values['ssh-option'],
      forget: values.forget,
    });
    for (const s of said) io.stdout.write(`${s}\n`);
    if (removed) {
      io.stdout.write(`unloaded ${model.name} (${model.spec})\n`);
      return EXIT.ok;
    }
    io.stderr.write(
      `quarry checkpoints unload: ${model.name} is kept in .quarry/models.json, as something it names was not ` +
        `stopped (above); \`quarry checkpoints unload ${name} --forget\` removes it without signalling anything\n`,
    );
    return 1;
  } catch (err) {
    if (err instanceof ModelRegistryError) {
      io.stderr.write(
        `quarry checkpoints unload: ${err.message}\n(nothing was signalled; fix or remove .quarry/models.json)\n`,
      );
      return EXIT.badInput;
    }
    throw err;
  }
}

export async function loadedCmd(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: { json: { type: 'boolean' } } });
  let models;
  try {
    models = new ModelRegistry(io.cwd).list();
  } catch (err) {
    io.stderr.write(`quarry checkpoints loaded: ${(err as Error).message}\n`);
    return EXIT.badInput;
  }
  if (values.json) {
    io.stdout.write(JSON.stringify({ models }) + '\n');
    return EXIT.ok;
  }
  if (models.length === 0) io.stdout.write('no models loaded (quarry checkpoints load CKPT_DIR)\n');
  for (const m of models) {
    io.stdout.write(`${m.name}  ${m.spec}\n  ${describeProvenance(m)}\n`);
    for (const e of m.evaluations)
      io.stdout.write(
        `  eval ${e.dataset} ${e.protocol} K=${e.samples}: greedy EX ${(100 * e.ex.greedy).toFixed(1)}% ` +
          `of ${e.items}\n`,
      );
  }
  return EXIT.ok;
}

export async function evalCmd(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      dataset: { type: 'string' },
      'db-dir': { type: 'string' },
      protocol: { type: 'string' },
      samples: { type: 'string' },
      limit: { type: 'string' },
      jobs: { type: 'string' },
      resume: { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('give one model name: quarry checkpoints eval NAME …');
  for (const f of ['dataset', 'db-dir', 'protocol'] as const)
    if (!values[f]) throw new UsageError(`--${f} is required`);
  let samples: number, limit: number | undefined, jobs: number;
  try {
    samples = positiveInt('samples', values.samples, 1);
    jobs = positiveInt('jobs', values.jobs, 1);
    limit = values.limit === undefined ? undefined : positiveInt('limit', values.limit, 0);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  let bar: ReturnType<typeof createProgress> | undefined;
  try {
    const { model, report, dir } = await evaluateModel({
      workspace: io.cwd,
      name: positionals[0],
      dataset: values.dataset!,
      dbDir: values['db-dir']!,
      protocol: values.protocol!,
      samples,
      limit,
      jobs,
      resume: values.resume,
      onProgress: (p) => {
        bar ??= createProgress(io.stderr, p.episodes, { label: `eval ${positionals[0]}` });
        bar.update(p.episodesDone);
      },
    });
    bar?.finish();
    const e = model.evaluations.at(-1)!;
    if (values.json) io.stdout.write(JSON.stringify({ model: model.name, evaluation: e }) + '\n');
    else
      io.stdout.write(
        `${model.name}: greedy EX ${(100 * report.ex.greedy).toFixed(1)}% of ${report.items}` +
          (report.ex.majority !== null ? `, majority ${(100 * report.ex.majority).toFixed(1)}%` : '') +
          (report.ex.passAtK !== null ? `, pass@${samples} ${(100 * report.ex.passAtK).toFixed(1)}%` : '') +
          `\n  stored with the model: ${dir}/report.json\n`,
      );
    return EXIT.ok;
  } catch (err) {
    bar?.finish();
    io.stderr.write(`quarry checkpoints eval: ${(err as Error).message}\n`);
    return EXIT.badInput;
  }
}

export async function compareCmd(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { dataset: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (positionals.length < 2) throw new UsageError('give two or more model names: quarry checkpoints compare A B …');
  if (!values.dataset) throw new UsageError('--dataset is required (the dataset the models were evaluated on)');
  try {
    const { comparison } = compareModels(io.cwd, positionals, values.dataset);
    io.stdout.write(values.json ? JSON.stringify(comparison) + '\n' : formatComparison(comparison) + '\n');
    return EXIT.ok;
  } catch (err) {
    io.stderr.write(`quarry checkpoints compare: ${(err as Error).message}\n`);
    return EXIT.badInput;
  }
}
