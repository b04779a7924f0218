// `quarry train`: a paper's recipe (trainer/recipes/, or a file) on an engine. For verl and SkyRL it writes a
// runnable launch (launch.sh starting `quarry serve-env` beside the trainer, launch.json, job.json) after a pre-flight:
// Quarry's batch/context/step arithmetic and the engine's own Hydra config composed with the overrides in the
// project's Python. --dry-run prints the launch and the pre-flight and writes nothing. TRL (the default) is not yet.
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { choosePython } from '../../core/training/pythonEnv';
import { ENGINE_NAMES, provenanceLabel, RECIPE_SETTINGS, type LaunchEngine } from '../../core/training/recipe';
import type { MappingRow } from '../../core/training/launchPlan';
import { VERL_MAPPING } from '../../core/training/verlLaunch';
import { SKYRL_MAPPING } from '../../core/training/skyrlLaunch';
import type { Finding } from '../../core/training/preflight';
import { numberText } from '../../core/training/overrides';
import {
  engineConfigName,
  launchRecord,
  listBuiltinRecipes,
  LaunchOutputRefused,
  prepareTrain,
  RecipeError,
  writeLaunch,
  type TrainPlan,
} from '../../app/train';
import { repoRootOf } from '../repoRoot';

const usage = `Usage: quarry train --recipe NAME|FILE [--engine trl|verl|skyrl] --model PATH_OR_ID --data DIR --out DIR
                    [--set key=value]... [--dry-run] [--json] [--python PATH] [--skyrl-config PATH]
                    [--db-dir DIR] [--force]
       quarry train --list
       quarry train --mapping verl|skyrl [--json]

Trains a paper's recipe (built-in: trainer/recipes/*.yaml; or a recipe file of your own).
  --engine trl    trains here (the default; not yet: see below)
  --engine verl   writes into --out a launch of verl.trainer.main_ppo with the recipe's Hydra overrides
  --engine skyrl  writes into --out a launch of SkyRL (python -m quarry_trainer.skyrl.main) with its overrides
The launch (launch.sh) starts \`quarry serve-env\` beside the trainer; launch.json says where every override comes from;
job.json runs it with \`quarry jobs submit --target local --spec OUT/job.json\`.

  --data DIR       \`quarry data rl\`'s folder: train.parquet (val.parquet or test.parquet beside it for validation)
  --set key=value  replace a recipe setting (rl.lr=2e-6) or set an engine key (verl.KEY=V, skyrl.KEY=V); repeatable
  --dry-run        print the launch and the pre-flight; write nothing
  --python PATH    the project's Python for the engine check (else QUARRY_PYTHON, else the nearest .venv/)
  --skyrl-config   skyrl-train's wheel or config folder (else QUARRY_SKYRL_CONFIG; not needed where skyrl_train
                   imports). Get it: python -m pip download --no-deps --python-version 3.12 --only-binary=:all:
                   skyrl-train -d DIR
  --db-dir DIR     the databases the rows name (default: data.json's)
  --force          write into a non-empty --out that holds no earlier launch
  --list           the built-in recipes;  --mapping ENGINE  the recipe → engine key table

Pre-flight (before anything is written, and in --dry-run): the batch sizes divide (train batch × group size by
mini-batch, by micro-batch × GPUs), prompt + response fit the model's context, the data has a step's worth of rows
and was built for the recipe's protocol; then the engine's Hydra config composes with every override (unknown keys
named) and, for verl, its validate_config passes and Quarry's plug-ins load.
Exit codes: 0 launch written (or printed), 1 the pre-flight found errors, 2 bad input, 3 --engine trl (not yet).`;

const TRL_NOT_YET =
  'quarry train --engine trl: not yet. Training with TRL from a recipe is not built; meanwhile TRL ' +
  'trains with `python -m quarry_trainer.train.sft` (SFT) and GRPOTrainer with ' +
  'quarry_trainer.trl.rollout.QuarryRollout ' +
  '(docs/training.md). --engine verl or --engine skyrl writes a launch for a cluster.';

function renderMapping(engine: LaunchEngine, rows: readonly MappingRow[]): string {
  const lines = [`${engine}: recipe setting → ${engine} keys (file), conversion`];
  for (const r of rows) {
    lines.push(`  ${r.recipe.length > 0 ? r.recipe.join(' + ') : '(quarry)'} → ${r.engine.join(', ')}`);
    lines.push(`      ${r.file}${r.how ? `; ${r.how}` : ''}`);
  }
  return lines.join('\n');
}

function findingLine(f: Finding): string {
  return `  ${f.level === 'error' ? 'x error' : '! warning'} [${f.check}] ${f.message}`;
}

function show(v: unknown): string {
  const s = typeof v === 'string' ? v : typeof v === 'number' ? numberText(v) : JSON.stringify(v);
  return s.length > 48 ? `${s.slice(0, 45)}...` : s;
}

function renderPlan(p: TrainPlan, dryRun: boolean): string {
  const out: string[] = [];
  const r = p.recipe;
  out.push(`quarry train: recipe ${r.name} — ${r.paper.title}`);
  out.push(`  engine ${p.engine} (${p.plan.module}); protocol ${r.protocol}; model ${p.model.model}`);
  out.push(
    `  data ${p.data.dir} (${p.inputs.rows ?? '?'} rows, ${p.inputs.rowsFrom}); context ${p.context.length} tokens ` +
      `(${p.context.from})`,
  );
  out.push('');
  out.push('Settings (where each value comes from):');
  const keys = Object.keys(r.settings).filter((k) => RECIPE_SETTINGS[k]);
  const w = Math.max(...keys.map((k) => k.length));
  for (const k of keys) {
    const s = r.settings[k];
    out.push(`  ${k.padEnd(w)}  ${show(s.value).padEnd(24)}  ${provenanceLabel(s)}`);
  }
  for (const [k, s] of Object.entries(r.engines[p.engine]))
    out.push(`  ${`${p.engine}.${k}`}  ${show(s.value)}  ${provenanceLabel(s)}`);
  if (p.plan.notCarried.length > 0) {
    out.push('');
    out.push(`Not carried by ${p.engine}:`);
    for (const n of p.plan.notCarried) out.push(`  ${n.key}: ${n.why}`);
  }
  if (p.plan.notes.length > 0) {
    out.push('');
    out.push('Notes:');
    for (const n of p.plan.notes) out.push(`  ${n}`);
  }
  out.push('');
  out.push('Pre-flight:');
  const v = p.verdict;
  if (v.composed) {
    out.push(
      `  ok: ${p.engine} ${v.engine_version ?? ''} composed ${v.config} with all ${p.plan.overrides.length} overrides` +
        `${v.config_from ? ` (config from ${v.config_from})` : ''}`,
    );
    for (const c of v.checks) out.push(`  ok: ${c}`);
  }
  const errors = p.findings.filter((f) => f.level === 'error');
  if (errors.length === 0) out.push(`  ok: Quarry's checks (batch sizes, context, steps, data, reward panel)`);
  for (const f of p.findings) out.push(findingLine(f));
  out.push(
    p.ok
      ? `  The launch passes the pre-flight.`
      : `  The pre-flight found ${errors.length} error(s): ` +
          `${dryRun ? 'the launch below would not start as it is' : 'nothing was written'}.`,
  );
  if (dryRun) {
    out.push('');
    out.push('Launch (launch.sh):');
    out.push(p.script);
  }
  return out.join('\n');
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      recipe: { type: 'string' },
      engine: { type: 'string' },
      model: { type: 'string' },
      data: { type: 'string' },
      out: { type: 'string' },
      set: { type: 'string', multiple: true },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      python: { type: 'string' },
      'skyrl-config': { type: 'string' },
      'db-dir': { type: 'string' },
      force: { type: 'boolean' },
      list: { type: 'boolean' },
      mapping: { type: 'string' },
    },
  });
  if (values.list) {
    const recipes = listBuiltinRecipes();
    io.stdout.write(
      `${values.json ? JSON.stringify(recipes, null, 2) : recipes.map((r) => `${r.name}  ${r.file}`).join('\n')}\n`,
    );
    return EXIT.ok;
  }
  if (values.mapping !== undefined) {
    if (!(ENGINE_NAMES as readonly string[]).includes(values.mapping)) throw new UsageError('--mapping verl|skyrl');
    const engine = values.mapping as LaunchEngine;
    const rows = engine === 'verl' ? VERL_MAPPING : SKYRL_MAPPING;
    io.stdout.write(
      `${
        values.json
          ? JSON.stringify(
              rows.map(({ recipe, engine: keys, file, how, add }) => ({
                recipe,
                engine: keys,
                file,
                how: how ?? null,
                add: add ?? [],
              })),
              null,
              2,
            )
          : renderMapping(engine, rows)
      }\n`,
    );
    return EXIT.ok;
  }
  const engine = values.engine ?? 'trl';
  if (!['trl', 'verl', 'skyrl'].includes(engine))
    throw new UsageError(`--engine must be trl, verl or skyrl, got '${engine}'`);
  if (!values.recipe)
    throw new UsageError('--recipe NAME|FILE is required (quarry train --list shows the built-in ones)');
  if (engine === 'trl') {
    io.stderr.write(`${TRL_NOT_YET}\n`);
    return EXIT.rejected;
  }
  for (const flag of ['model', 'data', 'out'] as const) {
    if (!values[flag]) throw new UsageError(`--${flag} is required for --engine ${engine}`);
  }
  const root = repoRootOf(__dirname);
  const python = choosePython({
    flag: values.python ? resolve(io.cwd, values.python) : undefined,
    setting: process.env.QUARRY_PYTHON,
    searchRoots: [io.cwd, root].filter((d): d is string => d !== undefined),
  });
  const quarryCommand = root ? join(root, 'bin', 'quarry') : 'quarry';
  const dryRun = values['dry-run'] === true;
  let plan: TrainPlan;
  try {
    plan = await prepareTrain({
      recipe: values.recipe,
      engine: engine as LaunchEngine,
      model: values.model as string,
      data: values.data as string,
      out: values.out as string,
      sets: values.set ?? [],
      cwd: io.cwd,
      python: python.path,
      repoRoot: root,
      skyrlConfig: values['skyrl-config'],
      dbDir: values['db-dir'],
      quarryCommand,
      dryRun,
      env: process.env,
    });
  } catch (err) {
    if (err instanceof RecipeError) {
      io.stderr.write(`quarry train: ${err.message}\n`);
      return EXIT.badInput;
    }
    throw err;
  }
  const command = ['quarry', 'train', ...argv];
  if (values.json) {
    io.stdout.write(
      `${JSON.stringify(
        { ...launchRecord(plan, command), dryRun, script: plan.script, engineConfig: engineConfigName(plan.engine) },
        null,
        2,
      )}\n`,
    );
  } else {
    io.stdout.write(`${renderPlan(plan, dryRun)}\n`);
  }
  if (!plan.ok) return 1;
  if (dryRun) return EXIT.ok;
  const outDir = resolve(io.cwd, values.out as string);
  try {
    const files = writeLaunch(plan, outDir, command, values.force === true);
    if (!values.json) {
      io.stdout.write(
        `\nWrote ${files.join(', ')}.\nRun it on the training node: bash ${files[0]}\n` +
          `or as a job: quarry jobs submit --target local --spec ${files[2]}\n`,
      );
    }
  } catch (err) {
    if (err instanceof LaunchOutputRefused) {
      io.stderr.write(`quarry train: ${err.message}\n`);
      return EXIT.badInput;
    }
    throw err;
  }
  return EXIT.ok;
}

export const trainCommand: Command = {
  name: 'train',
  summary: "Train a paper's recipe: a verl or SkyRL launch with its pre-flight (TRL: not yet)",
  usage,
  run,
};
