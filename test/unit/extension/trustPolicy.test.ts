// Workspace Trust's decisions and words (src/extension/trustPolicy.ts) and the manifest's declaration: Quarry runs in
// an untrusted folder with limited support, the settings that name an interpreter, targets, a server or a file outside
// the folder are restricted, and each refusal says what is off and why, in one sentence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../helpers/fixtures';
import {
  GATES,
  refusalMessage,
  registryEntryAllowed,
  RESTRICTED_NOTICE,
  TRUST_COMMAND,
  type GatedFeature,
} from '../../../src/extension/trustPolicy';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  capabilities?: {
    untrustedWorkspaces?: { supported: boolean | 'limited'; description?: string; restrictedConfigurations?: string[] };
  };
  contributes: {
    configuration: { properties: Record<string, unknown> };
    viewsWelcome: { view: string; contents: string; when?: string }[];
  };
};

test('the manifest declares limited support in untrusted workspaces, with a description', () => {
  const u = manifest.capabilities?.untrustedWorkspaces;
  assert.equal(u?.supported, 'limited');
  assert.match(u?.description ?? '', /untrusted folder/);
});

test('every setting that names an interpreter, targets, a server or an outside file is restricted', () => {
  const restricted = manifest.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? [];
  const props = Object.keys(manifest.contributes.configuration.properties);
  for (const key of restricted) assert.ok(props.includes(key), `${key} is not a Quarry setting`);
  assert.deepEqual([...restricted].sort(), [
    'quarry.model.baseUrl',
    'quarry.python',
    'quarry.targets',
    'quarry.trajectories.store',
  ]);
});

test('the Jobs view says why training is off in an untrusted folder and offers Workspace Trust', () => {
  const jobs = manifest.contributes.viewsWelcome.filter((w) => w.view === 'quarry.jobs');
  assert.deepEqual(jobs.map((w) => w.when).sort(), ['!isWorkspaceTrusted', 'isWorkspaceTrusted']);
  const untrusted = jobs.find((w) => w.when === '!isWorkspaceTrusted')!;
  assert.ok(untrusted.contents.includes(`(command:${TRUST_COMMAND})`), untrusted.contents);
  assert.match(untrusted.contents, /targets\.json/);
});

test('a refusal says what is off, that the folder is untrusted, and why, in one sentence', () => {
  assert.equal(
    refusalMessage('train'),
    'Quarry: training is off in an untrusted workspace: .quarry/targets.json could run commands on this machine ' +
      "(or over ssh, Slurm, Ray), and the wizard runs the workspace's Python.",
  );
  for (const f of Object.keys(GATES) as GatedFeature[]) {
    const m = refusalMessage(f);
    assert.match(m, /^Quarry: [a-z][^:]* is off in an untrusted workspace: .+[^.]\.$/, m);
    assert.doesNotMatch(m, /\.\.$/, m);
    assert.match(GATES[f].why, /\.quarry\/|Python|target/, `${f} names what it would act on`);
  }
  assert.match(RESTRICTED_NOTICE, /Asking, running SQL, replay, diagnostics and labeling work\.$/);
});

test('in an untrusted workspace the model picker offers ONNX registry entries, never a server', () => {
  const rows: [spec: string, trusted: boolean, allowed: boolean][] = [
    ['onnx:/ws/.quarry/models/a', false, true],
    ['openai:http://10.0.0.5:8000/v1#m', false, false],
    ['openai:http://127.0.0.1:8000/v1#m', false, false],
    ['anthropic:x', false, false],
    ['onnx:/ws/.quarry/models/a', true, true],
    ['openai:http://10.0.0.5:8000/v1#m', true, true],
  ];
  for (const [spec, trusted, allowed] of rows)
    assert.equal(registryEntryAllowed(spec, trusted), allowed, `${spec} trusted=${trusted}`);
});
