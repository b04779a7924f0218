// The launch script's hand-over of the environment service to Ray workers, run for real in bash: the built CLI's
// `quarry serve-env`, the trainer host's Python with this checkout's quarry_trainer, and in place of the engine a
// small trainer program that reports what it was handed: the URL (the service answers it with the token), the
// runtime-env hook Ray would call (loaded by its dotted name, as ray/_private/worker.py does, it adds the URL and keeps
// the runtime env's own variables, never the token), whether the token is on any process's command line, and that the
// services are gone once the trainer has ended. With no Ray cluster here the helper says `none` and names no directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { readRecipe } from '../../../src/app/train/recipes';
import { renderLaunchScript } from '../../../src/app/train/launchScript';
import { planVerl } from '../../../src/core/training/verlLaunch';
import { protocolStops } from '../../../src/core/training/protocolStops';
import { tempDir } from '../../helpers/fixtures';

const PROBE = `
import importlib, json, os, sys, urllib.request
token = os.environ["QUARRY_ENV_TOKEN"]
module, _, name = os.environ["RAY_RUNTIME_ENV_HOOK"].rpartition(".")
hooked = getattr(importlib.import_module(module), name)({"env_vars": {"KEEP": "1"}})
on_cmdline = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if token.encode() in f.read():
                on_cmdline.append(pid)
    except OSError:
        pass
req = urllib.request.Request(os.environ["QUARRY_ENV_URL"] + "/v1/health", headers={"Authorization": "Bearer " + token})
print(json.dumps({
    "url": os.environ["QUARRY_ENV_URL"], "directory": os.environ.get("QUARRY_ENV_DIRECTORY"), "hooked": hooked,
    "tokenOnCmdline": on_cmdline, "health": json.load(urllib.request.urlopen(req)), "args": len(sys.argv) - 1,
}))
`;

function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const s = connect(Number(port), hostname);
    s.on('connect', () => {
      s.destroy();
      done(true);
    });
    s.on('error', () => done(false));
  });
}

function script(multiNode: boolean): { text: string; overrides: number } {
  const recipe = readRecipe('sql-trail', process.cwd());
  const plan = planVerl({
    recipe,
    model: '/models/base',
    trainFile: '/data/train.parquet',
    valFile: null,
    outDir: '/runs/x',
    rows: null,
    rowsFrom: 'test',
    stops: protocolStops(recipe.protocol),
  });
  const cli = `${process.execPath} ${resolve('dist/cli.js')}`;
  const text = renderLaunchScript({
    recipe,
    plan: { ...plan, module: 'quarry_launch_probe' },
    quarryCommand: cli,
    dbDir: null,
    multiNode,
  });
  return { text, overrides: plan.overrides.length };
}

test('launch.sh hands Ray workers the service through the runtime-env hook, never the token', async () => {
  const dir = tempDir('quarry-launch-ray-');
  const { text, overrides } = script(false);
  writeFileSync(join(dir, 'launch.sh'), text);
  writeFileSync(join(dir, 'quarry_launch_probe.py'), PROBE);
  const out = execFileSync('bash', [join(dir, 'launch.sh')], {
    encoding: 'utf8',
    env: {
      ...process.env,
      PYTHON: 'python3',
      PYTHONPATH: `${dir}:${resolve('trainer')}`,
      QUARRY_DB_DIR: tempDir('quarry-launch-db-'),
      // No Ray cluster for this launch, whatever runs on the machine (ray/_private/services.py: "local").
      RAY_ADDRESS: 'local',
    },
    timeout: 120_000,
  });
  const seen = JSON.parse(out.trim().split('\n').pop() ?? '{}');
  assert.equal(seen.args, overrides, 'the trainer gets every override');
  assert.match(seen.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(seen.health.ok, true);
  assert.deepEqual(seen.hooked, { env_vars: { KEEP: '1', QUARRY_ENV_URL: seen.url } });
  assert.equal(seen.directory, null, 'no cluster: no directory actor');
  assert.deepEqual(seen.tokenOnCmdline, []);
  assert.match(readFileSync(join(dir, 'ray-env.out'), 'utf8'), /^quarry ray env: none$/m);
  assert.equal(await answers(seen.url), false, 'the service stops with the trainer');
});

test('more than one node: a service per node unless QUARRY_ENV_PER_NODE=0; the helper reads the token file', () => {
  const one = script(false).text;
  const many = script(true).text;
  assert.match(one, /^PER_NODE="\$\{QUARRY_ENV_PER_NODE:-0\}"$/m);
  assert.match(many, /^PER_NODE="\$\{QUARRY_ENV_PER_NODE:-1\}"$/m);
  assert.match(many, /RAY_ENV_ARGS\+=\(--per-node --db-dir "\$DB_DIR" -- "\$\{QUARRY_CMD\[@\]\}"\)/);
  // The helper reads the token from its 0600 file; the hook is exported before the trainer starts.
  assert.match(many, /RAY_ENV_ARGS=\(serve --url "\$URL" --token-file "\$TOKEN_FILE"\)/);
  assert.ok(many.indexOf('export RAY_RUNTIME_ENV_HOOK=') < many.indexOf('"$PYTHON" -m quarry_launch_probe'));
});
