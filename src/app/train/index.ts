// `quarry train` for verl and SkyRL: a recipe (with --set applied), the data folder and the model become the engine's
// launch — its overrides from the engine's mapping table, the pre-flight (Quarry's arithmetic on the launch's own
// values, then the engine's own config composed in the project's Python) and the launch script. Nothing is written
// unless the pre-flight passes; `--dry-run` only prints.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LaunchInputs, EnginePlan } from '../../core/training/launchPlan';
import { planVerl, VERL_CONFIG, VERL_TOOL_PROTOCOLS } from '../../core/training/verlLaunch';
import { planSkyrl, SKYRL_CONFIG } from '../../core/training/skyrlLaunch';
import { planTrl, TRL_CONFIG } from '../../core/training/trlLaunch';
import { overrideArg, type Override } from '../../core/training/overrides';
import { arithmetic, type Finding } from '../../core/training/preflight';
import { protocolStops } from '../../core/training/protocolStops';
import { applyAssignments, settingValue, type LaunchEngine, type Recipe } from '../../core/training/recipe';
import { parseAssignments, readRecipe, RecipeError } from './recipes';
import { inspectDataDir, inspectModel, type DataDirInfo, type ModelInfo } from './inputs';
import { runEnginePreflight, type EngineVerdict } from './enginePreflight';
import { renderLaunchScript } from './launchScript';

export { RecipeError, listBuiltinRecipes } from './recipes';

const LAUNCH_SCHEMA = 'quarry.launch/1';

interface TrainOptions {
  recipe: string;
  engine: LaunchEngine;
  model: string;
  data: string;
  out: string;
  sets: readonly string[];
  cwd: string;
  /** The project's Python (core/training/pythonEnv.ts choosePython). */
  python: string;
  repoRoot?: string;
  skyrlConfig?: string;
  /** The databases' folder, when data.json does not say or another is wanted. */
  dbDir?: string;
  /** How the launch script runs the quarry CLI. */
  quarryCommand: string;
  dryRun: boolean;
  env?: Record<string, string | undefined>;
}

export interface TrainPlan {
  recipe: Recipe;
  engine: LaunchEngine;
  plan: EnginePlan;
  inputs: LaunchInputs;
  data: DataDirInfo;
  model: ModelInfo;
  context: { length: number; from: string };
  dbDir: string | null;
  /** Quarry's findings, then the engine's. */
  findings: Finding[];
  verdict: EngineVerdict;
  script: string;
  ok: boolean;
}

const error = (check: string, message: string): Finding => ({ level: 'error', check, message });
const warning = (check: string, message: string): Finding => ({ level: 'warning', check, message });

/** What the data folder and model say about this recipe. */
function inputFindings(
  engine: LaunchEngine,
  recipe: Recipe,
  data: DataDirInfo,
  model: ModelInfo,
  dbDir: string | null,
  dryRun: boolean,
): Finding[] {
  const out: Finding[] = [];
  if (!data.trainExists) {
    const msg =
      `${data.trainFile} does not exist: make the training rows with \`quarry data rl --protocol ` +
      `${recipe.protocol} --out ${data.dir}\`${
        settingValue(recipe, 'data.command')
          ? ` (the recipe's data.command: ` + `${String(settingValue(recipe, 'data.command'))})`
          : ''
      }`;
    out.push(dryRun ? warning('data.missing', msg) : error('data.missing', msg));
  }
  for (const p of data.problems) out.push(warning('data.json', p));
  if (data.protocol !== null && data.protocol !== recipe.protocol) {
    out.push(
      error(
        'data.protocol',
        `the rows' prompts were built for protocol '${data.protocol}' (data.json) but recipe ` +
          `${recipe.name} trains protocol '${recipe.protocol}': make the data with --protocol ${recipe.protocol}`,
      ),
    );
  }
  const turns = settingValue<number>(recipe, 'rl.max_turns');
  out.push(...toolDeclarationFindings(engine, recipe, data));
  if (data.maxTurns !== null && turns !== undefined && data.maxTurns !== turns) {
    out.push(
      warning(
        'data.turns',
        `the prompts were built with a ${data.maxTurns}-turn budget (data.json) and the ` +
          `recipe allows ${turns} turns: make the data with --max-turns ${turns}, or --set ` +
          `rl.max_turns=${data.maxTurns}`,
      ),
    );
  }
  if (
    settingValue(recipe, 'data.curriculum_bin_size') !== undefined &&
    data.described &&
    data.curriculumLevels === null
  ) {
    out.push(
      warning(
        'data.curriculum',
        `the recipe orders training by curriculum levels (data.curriculum_bin_size) ` +
          'and the data has none: make it with --difficulty RUN --curriculum-bins N',
      ),
    );
  }
  if (!dbDir) {
    out.push(
      warning(
        'data.databases',
        "the databases' folder is unknown (no data.json, no --db-dir): the launch " + 'script needs QUARRY_DB_DIR',
      ),
    );
  }
  for (const p of model.problems) out.push(error('model', p));
  const base = settingValue<string>(recipe, 'model.base');
  if (!model.local && base && model.model !== base) {
    out.push(
      warning(
        'model.base',
        `--model ${model.model} is not the recipe's base model ${base}: its numbers were ` + 'tuned for that one',
      ),
    );
  }
  return out;
}

/**
 * The tool is declared once: verl's tool agent loop (a tool protocol with rl.max_turns, verlLaunch.ts) renders the
 * prompt with `tools=` (verl/experimental/agent_loop/tool_agent_loop.py _handle_pending_state), so its rows must leave
 * the declaration to the template; every other launch passes no tools, so its rows must keep it.
 */
function toolDeclarationFindings(engine: LaunchEngine, recipe: Recipe, data: DataDirInfo): Finding[] {
  if (data.toolsDeclared === null || data.protocol !== recipe.protocol) return [];
  const toolLoop =
    engine === 'verl' &&
    VERL_TOOL_PROTOCOLS.includes(recipe.protocol) &&
    settingValue<number>(recipe, 'rl.max_turns') !== undefined;
  if (toolLoop && data.toolsDeclared === 'prompt') {
    return [
      error(
        'data.tools',
        "the rows' system prompt declares the tool (data.json protocol.toolsDeclared: prompt) and verl's tool " +
          'agent loop declares it again through the chat template (tools=): make the data with ' +
          `\`quarry data rl --protocol ${recipe.protocol} --tools-in-template\``,
      ),
    ];
  }
  if (!toolLoop && data.toolsDeclared === 'chat-template') {
    return [
      error(
        'data.tools',
        "the rows leave the tool's declaration to the chat template (made with --tools-in-template) and this " +
          `${engine} launch passes no tools to it, so the policy would never be told of the tool: make the ` +
          'data without --tools-in-template',
      ),
    ];
  }
  return [];
}

/** What the engine said, as findings: unknown keys, failed validation, values read otherwise than meant. */
function verdictFindings(verdict: EngineVerdict, overrides: readonly Override[]): Finding[] {
  const out: Finding[] = [];
  for (const key of verdict.unknown_keys) {
    const o = overrides.find((x) => x.key === key);
    out.push(
      error(
        'engine.unknown-key',
        `${verdict.engine} has no key '${key}'${o ? ` (from ${o.from})` : ''} in ` +
          `${verdict.config ?? 'its config'}`,
      ),
    );
  }
  for (const e of verdict.errors) {
    out.push(error(`engine.${e.kind}`, e.message));
  }
  if (verdict.composed) {
    for (const o of overrides) {
      if (o.shellVars || !(o.key in verdict.values)) continue;
      const got = verdict.values[o.key];
      if (JSON.stringify(got) !== JSON.stringify(o.value)) {
        out.push(
          error(
            'engine.value',
            `${verdict.engine} reads ${o.key} as ${JSON.stringify(got)}, not ` +
              `${JSON.stringify(o.value)} (from ${o.from})`,
          ),
        );
      }
    }
  }
  return out;
}

export async function prepareTrain(o: TrainOptions): Promise<TrainPlan> {
  const read = readRecipe(o.recipe, o.cwd);
  const applied = applyAssignments(read, parseAssignments(o.sets));
  if (applied.problems.length > 0) throw new RecipeError('--set cannot apply:', applied.problems);
  const recipe = applied.recipe;
  const dataDir = resolve(o.cwd, o.data);
  const outDir = resolve(o.cwd, o.out);
  const data = inspectDataDir(dataDir);
  const model = inspectModel(o.model, o.cwd);
  const recipeContext = settingValue<number>(recipe, 'model.context_length') ?? 0;
  const context =
    model.contextLength !== null
      ? { length: model.contextLength, from: `${model.model}/config.json max_position_embeddings` }
      : {
          length: recipeContext,
          from: `the recipe's model.context_length for ${String(settingValue(recipe, 'model.base'))}`,
        };
  const recipeRows = settingValue<number>(recipe, 'data.train_size');
  const rows = data.rows ?? recipeRows ?? null;
  const rowsFrom =
    data.rows !== null ? 'data.json' : recipeRows !== undefined ? "the paper's data.train_size" : 'unknown';
  const inputs: LaunchInputs = {
    recipe,
    model: model.model,
    trainFile: data.trainFile,
    valFile: data.valFile,
    outDir,
    rows,
    rowsFrom,
    stops: protocolStops(recipe.protocol),
  };
  const plan = o.engine === 'verl' ? planVerl(inputs) : o.engine === 'trl' ? planTrl(inputs) : planSkyrl(inputs);
  const dbDir = o.dbDir ? resolve(o.cwd, o.dbDir) : data.dbDir;
  const findings = [
    ...inputFindings(o.engine, recipe, data, model, dbDir, o.dryRun),
    ...arithmetic({
      engine: o.engine,
      recipe,
      overrides: plan.overrides,
      contextLength: context.length,
      contextFrom: context.from,
      rows,
      rowsFrom,
      env: o.env,
    }),
  ];
  const verdict = await runEnginePreflight({
    python: o.python,
    engine: o.engine,
    overrides: plan.overrides.map(overrideArg),
    skyrlConfig: o.skyrlConfig ? resolve(o.cwd, o.skyrlConfig) : undefined,
    repoRoot: o.repoRoot,
  });
  findings.push(...verdictFindings(verdict, plan.overrides));
  const script = renderLaunchScript({
    recipe,
    plan,
    quarryCommand: o.quarryCommand,
    dbDir,
    multiNode: (settingValue<number>(recipe, 'hardware.nodes') ?? 1) > 1,
  });
  return {
    recipe,
    engine: o.engine,
    plan,
    inputs,
    data,
    model,
    context,
    dbDir,
    findings,
    verdict,
    script,
    ok: findings.every((f) => f.level !== 'error'),
  };
}

/** The engine's config file this launch composes, for messages. */
export function engineConfigName(engine: LaunchEngine): string {
  return engine === 'verl' ? VERL_CONFIG : engine === 'trl' ? TRL_CONFIG : SKYRL_CONFIG;
}

/** launch.json: the launch as data (every override with where it comes from, the pre-flight's verdict). */
export function launchRecord(p: TrainPlan, command: readonly string[]): Record<string, unknown> {
  return {
    schema: LAUNCH_SCHEMA,
    createdAt: new Date().toISOString(),
    command,
    engine: p.engine,
    module: p.plan.module,
    recipe: {
      name: p.recipe.name,
      paper: p.recipe.paper,
      protocol: p.recipe.protocol,
      settings: p.recipe.settings,
      engines: p.recipe.engines,
    },
    model: p.model.model,
    data: {
      dir: p.data.dir,
      train: p.inputs.trainFile,
      val: p.inputs.valFile,
      rows: p.inputs.rows,
      rowsFrom: p.inputs.rowsFrom,
      databases: p.dbDir,
    },
    context: p.context,
    overrides: p.plan.overrides.map((o) => ({ key: o.key, value: o.value, from: o.from, arg: overrideArg(o) })),
    notCarried: p.plan.notCarried,
    notes: p.plan.notes,
    preflight: { ok: p.ok, findings: p.findings, engine: p.verdict },
  };
}

export class LaunchOutputRefused extends Error {}

/** Writes launch.sh, launch.json and job.json (a `quarry jobs submit` spec) into `outDir`; returns their paths. */
export function writeLaunch(p: TrainPlan, outDir: string, command: readonly string[], force = false): string[] {
  const launchJson = join(outDir, 'launch.json');
  if (existsSync(outDir) && readdirSync(outDir).length > 0 && !force) {
    let ours = false;
    try {
      ours = (JSON.parse(readFileSync(launchJson, 'utf8')) as { schema?: string }).schema === LAUNCH_SCHEMA;
    } catch {
      /* not a launch folder */
    }
    if (!ours)
      throw new LaunchOutputRefused(
        `${outDir} is not empty and holds no earlier launch: choose another --out ` + 'or pass --force',
      );
  }
  mkdirSync(outDir, { recursive: true });
  const script = join(outDir, 'launch.sh');
  writeFileSync(script, p.script);
  chmodSync(script, 0o755);
  writeFileSync(launchJson, `${JSON.stringify(launchRecord(p, command), null, 2)}\n`);
  const job = join(outDir, 'job.json');
  writeFileSync(
    job,
    `${JSON.stringify(
      {
        name: `${p.recipe.name} (${p.engine})`,
        target: 'local',
        engine: p.engine,
        recipe: p.recipe.name,
        model: p.model.model,
        data: p.data.dir,
        command: ['bash', script],
        cwd: outDir,
        ...(p.engine === 'verl' ? { env: { VERL_FILE_LOGGER_PATH: join(outDir, 'metrics.jsonl') } } : {}),
        ...(p.engine === 'skyrl' ? { env: { QUARRY_METRICS_PATH: join(outDir, 'metrics.jsonl') } } : {}),
      },
      null,
      2,
    )}\n`,
  );
  return [script, launchJson, job];
}
