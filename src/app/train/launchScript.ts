// The launch `quarry train` writes for verl and SkyRL: a bash script that starts `quarry serve-env` beside the trainer
// (a free port, a fresh bearer token), exports QUARRY_ENV_URL / QUARRY_ENV_TOKEN, finds Quarry's plug-ins in the
// training host's quarry_trainer (QUARRY_TRAINER_DIR), hands the service to the workers of a Ray cluster started
// before the launch (quarry_trainer/ray_env.py: a runtime-env hook and a directory actor, optionally a service per
// node), runs the engine's entry point with the recipe's overrides and stops the services when training ends.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are bash, where ${NAME} is the shell's
import type { EnginePlan } from '../../core/training/launchPlan';
import { overrideArg, shellQuote } from '../../core/training/overrides';
import type { Recipe } from '../../core/training/recipe';

interface ScriptContext {
  recipe: Recipe;
  plan: EnginePlan;
  /** How to run the quarry CLI where the script runs (default for $QUARRY). */
  quarryCommand: string;
  /** The databases the rows name (default for $QUARRY_DB_DIR), when data.json says. */
  dbDir: string | null;
  /** More than one node: the service listens on every interface (with its token) and is reached by host name. */
  multiNode: boolean;
}

/** The trainer's command line: one argument per line, each quoted for the shell. */
export function trainerCommand(plan: EnginePlan): string[] {
  return [`"$PYTHON" -m ${plan.module}`, ...plan.overrides.map((o) => shellQuote(overrideArg(o), o.shellVars)), '"$@"'];
}

/** A value inside a double-quoted shell default (`${VAR:-value}`). */
function inDoubleQuotes(s: string): string {
  return s.replace(/["$`\\]/g, '\\$&');
}

/** The script's lines that hand the service to the workers of a Ray cluster started before the launch. */
function rayWorkersLines(multiNode: boolean): string[] {
  return [
    '',
    '# A Ray cluster started before this launch (`ray start`, a Slurm allocation, a Ray job) forks its workers without',
    "# this script's environment. quarry_trainer.ray_env then holds the token and the service URLs in a Ray actor",
    "# that QUARRY_ENV_DIRECTORY names, and Ray's runtime-env hook adds QUARRY_ENV_URL and that name (never the token,",
    "# which Ray would log) to the runtime env of the trainer's ray.init, so every worker finds the service. With",
    '# QUARRY_ENV_PER_NODE=1 (the default with more than one node) it starts `quarry serve-env` on every node, and',
    "# each worker uses its own node's. With no cluster running it prints `none` (Ray's workers inherit this script's",
    '# environment then).',
    `PER_NODE="\${QUARRY_ENV_PER_NODE:-${multiNode ? 1 : 0}}"`,
    'RAY_ENV_ARGS=(serve --url "$URL" --token-file "$TOKEN_FILE")',
    'if [ "$PER_NODE" = 1 ]; then RAY_ENV_ARGS+=(--per-node --db-dir "$DB_DIR" -- "${QUARRY_CMD[@]}"); fi',
    '# Made before the helper starts: its redirection happens in the background, after the first read may come.',
    ': > "$HERE/ray-env.out"',
    '"$PYTHON" -m quarry_trainer.ray_env "${RAY_ENV_ARGS[@]}" > "$HERE/ray-env.out" 2> "$HERE/ray-env.log" &',
    'RAY_ENV_PID=$!',
    'RAY_ENV=""',
    'for _ in $(seq 1 900); do',
    '  kill -0 "$RAY_ENV_PID" 2>/dev/null && RUNNING=1 || RUNNING=0',
    '  RAY_ENV="$(sed -n \'s/^quarry ray env: //p\' "$HERE/ray-env.out" | head -n 1)"',
    '  [ -n "$RAY_ENV" ] && break',
    '  if [ "$RUNNING" = 0 ]; then',
    '    echo "launch.sh: quarry_trainer.ray_env stopped:" >&2; cat "$HERE/ray-env.log" >&2; exit 1',
    '  fi',
    '  sleep 0.2',
    'done',
    '[ -n "$RAY_ENV" ] || { echo "launch.sh: quarry_trainer.ray_env did not answer within 180 s" >&2; exit 1; }',
    'case "$RAY_ENV" in',
    '  "directory "*) export QUARRY_ENV_DIRECTORY="${RAY_ENV#directory }" ;;',
    '  *) RAY_ENV_PID="" ;;',
    'esac',
    'export RAY_RUNTIME_ENV_HOOK=quarry_trainer.ray_env.runtime_env_hook',
  ];
}

export function renderLaunchScript(c: ScriptContext): string {
  const lines = [
    '#!/usr/bin/env bash',
    `# ${c.plan.engine} launch of recipe ${c.recipe.name} (${c.recipe.paper.title}), written by \`quarry train\`.`,
    "# Run it on the training node: bash launch.sh [more Hydra overrides]. It starts `quarry serve-env` (Quarry's",
    '# environment and reward panels) on a free port with a fresh token, exports QUARRY_ENV_URL and QUARRY_ENV_TOKEN',
    `# for the trainer, runs ${c.plan.module} and stops the service when training ends. launch.json lists every`,
    '# override with the recipe setting it comes from. Environment: PYTHON, QUARRY, QUARRY_DB_DIR, QUARRY_ENV_HOST,',
    '# QUARRY_ENV_PER_NODE.',
    'set -euo pipefail',
    'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"',
    'PYTHON="${PYTHON:-python3}"',
    `read -r -a QUARRY_CMD <<< "\${QUARRY:-${inDoubleQuotes(c.quarryCommand)}}"`,
    `DB_DIR="\${QUARRY_DB_DIR:-${inDoubleQuotes(c.dbDir ?? '')}}"`,
    `ENV_HOST="\${QUARRY_ENV_HOST:-${c.multiNode ? '0.0.0.0' : '127.0.0.1'}}"`,
    '',
    'if [ -z "$DB_DIR" ] || [ ! -d "$DB_DIR" ]; then',
    '  echo "launch.sh: set QUARRY_DB_DIR to the folder of the databases the training rows name (now: ' +
      "'$DB_DIR')\" >&2",
    '  exit 2',
    'fi',
    'QUARRY_TRAINER_DIR="$("$PYTHON" -c \'import os, quarry_trainer; ' +
      'print(os.path.dirname(quarry_trainer.__file__))\')"',
    '',
    '# The environment service, beside the trainer.',
    'umask 077',
    'TOKEN_FILE="$HERE/serve-env.token"',
    '"$PYTHON" -c \'import secrets; print(secrets.token_hex(32))\' > "$TOKEN_FILE"',
    '# Its own session: a Ctrl-C meant for the trainer (which saves a checkpoint first) does not stop the service.',
    'SETSID=""; command -v setsid >/dev/null 2>&1 && SETSID=setsid',
    ': > "$HERE/serve-env.out"',
    '$SETSID "${QUARRY_CMD[@]}" serve-env --host "$ENV_HOST" --port 0 --db-dir "$DB_DIR" --token-file "$TOKEN_FILE" \\',
    '  > "$HERE/serve-env.out" 2> "$HERE/serve-env.log" &',
    'ENV_PID=$!',
    'RAY_ENV_PID=""',
    'stop_services() {',
    '  for pid in $RAY_ENV_PID $ENV_PID; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done',
    '}',
    'trap stop_services EXIT',
    'URL=""',
    'for _ in $(seq 1 300); do',
    '  URL="$(sed -n \'s/^quarry env server listening on //p\' "$HERE/serve-env.out" | head -n 1)"',
    '  [ -n "$URL" ] && break',
    '  if ! kill -0 "$ENV_PID" 2>/dev/null; then',
    '    echo "launch.sh: quarry serve-env stopped:" >&2; cat "$HERE/serve-env.log" >&2; exit 1',
    '  fi',
    '  sleep 0.2',
    'done',
    '[ -n "$URL" ] || { echo "launch.sh: quarry serve-env did not start within 60 s" >&2; exit 1; }',
    'if [ "$ENV_HOST" != 127.0.0.1 ]; then URL="http://$(hostname -f):${URL##*:}"; fi',
    'export QUARRY_ENV_URL="$URL"',
    'QUARRY_ENV_TOKEN="$(cat "$TOKEN_FILE")"',
    'export QUARRY_ENV_TOKEN',
    ...rayWorkersLines(c.multiNode),
    ...(c.plan.engine === 'verl'
      ? [
          "# verl's file logger (trainer.logger has 'file'): one {step, data} line a step, read by Quarry's job panel.",
          'export VERL_FILE_LOGGER_PATH="${VERL_FILE_LOGGER_PATH:-$HERE/metrics.jsonl}"',
        ]
      : c.plan.engine === 'skyrl'
        ? [
            "# SkyRL's tracker also appends every step here (quarry_trainer/skyrl/metrics.py), for the job panel.",
            'export QUARRY_METRICS_PATH="${QUARRY_METRICS_PATH:-$HERE/metrics.jsonl}"',
          ]
        : []),
    'echo "launch.sh: environment service at $QUARRY_ENV_URL (log: $HERE/serve-env.log)" >&2',
    '',
    `# The trainer: ${c.plan.engine} with recipe ${c.recipe.name}. SIGTERM and SIGINT are passed on to it (it saves`,
    '# and stops); the script ends with its exit code.',
    `${trainerCommand(c.plan).join(' \\\n  ')} &`,
    'TRAINER_PID=$!',
    'trap \'kill -TERM "$TRAINER_PID" 2>/dev/null || true\' TERM INT',
    'STATUS=0',
    'while kill -0 "$TRAINER_PID" 2>/dev/null; do',
    '  if wait "$TRAINER_PID"; then STATUS=0; else STATUS=$?; fi',
    'done',
    'exit "$STATUS"',
    '',
  ];
  return lines.join('\n');
}
