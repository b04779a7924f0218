// The typed settings snapshot: its defaults are the manifest's, and hand-edited wrong values fall back or are clamped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SETTINGS, EDITOR_PROTOCOLS, MODEL_BACKENDS, readSettings } from '../../../src/extension/settings';
import { repoRoot } from '../../helpers/fixtures';

interface Prop {
  default: unknown;
  enum?: string[];
  minimum?: number;
  maximum?: number;
}
const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, Prop> } };
};
const props = manifest.contributes.configuration.properties;

function get(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);
}

test('every quarry.* setting in the manifest has the same default here, and nothing here is missing from it', () => {
  const keys = Object.keys(props).map((k) => k.replace(/^quarry\./, ''));
  assert.ok(keys.length >= 13);
  for (const k of keys) assert.deepEqual(get(DEFAULT_SETTINGS, k), props[`quarry.${k}`].default, `quarry.${k}`);
  // A group's keys are settings of their own; an object-valued setting (quarry.targets) is one leaf.
  const leaves = Object.entries(DEFAULT_SETTINGS).flatMap(([g, v]) =>
    typeof v === 'object' && !(`quarry.${g}` in props) ? Object.keys(v as object).map((k) => `${g}.${k}`) : [g],
  );
  assert.deepEqual(leaves.sort(), keys.sort());
  assert.deepEqual([...MODEL_BACKENDS], props['quarry.model.backend'].enum);
  assert.deepEqual([...EDITOR_PROTOCOLS], props['quarry.agent.protocol'].enum);
});

test('nothing set reads as the defaults', () => {
  assert.deepEqual(
    readSettings(() => undefined),
    DEFAULT_SETTINGS,
  );
});

test('valid values are taken; the base URL loses trailing slashes', () => {
  const values: Record<string, unknown> = {
    'model.backend': 'openai',
    'model.baseUrl': 'http://127.0.0.1:9000/v1//',
    'model.name': ' qwen ',
    'agent.protocol': 'mtir',
    'agent.maxTurns': 7,
    'agent.temperature': 0.6,
    'observation.maxRows': 20,
    'query.timeoutMs': 800,
    'databases.glob': '**/*.db',
    targets: { box: { kind: 'ssh', host: 'box', remoteDir: '/scratch' } },
  };
  const s = readSettings((k) => values[k]);
  assert.equal(s.model.backend, 'openai');
  assert.equal(s.model.baseUrl, 'http://127.0.0.1:9000/v1');
  assert.equal(s.model.name, 'qwen');
  assert.equal(s.agent.protocol, 'mtir');
  assert.equal(s.agent.maxTurns, 7);
  assert.equal(s.agent.temperature, 0.6);
  assert.equal(s.observation.maxRows, 20);
  assert.equal(s.query.timeoutMs, 800);
  assert.equal(s.databases.glob, '**/*.db');
  assert.deepEqual(s.targets, { box: { kind: 'ssh', host: 'box', remoteDir: '/scratch' } });
});

test('wrong types and unknown choices fall back to the defaults; numbers are clamped to the manifest range', () => {
  const values: Record<string, unknown> = {
    'model.backend': 'gpt',
    'model.baseUrl': '   ',
    'agent.protocol': 'progress',
    'agent.maxTurns': 99.4,
    'agent.temperature': -1,
    'observation.maxRows': 'many',
    'observation.maxChars': 5,
    'query.timeoutMs': Number.NaN,
    'databases.glob': '',
    'trajectories.store': 42,
    targets: ['box'],
  };
  const s = readSettings((k) => values[k]);
  assert.equal(s.model.backend, 'vscode-lm');
  assert.equal(s.model.baseUrl, DEFAULT_SETTINGS.model.baseUrl);
  assert.equal(s.agent.protocol, 'skyrl');
  assert.equal(s.agent.maxTurns, props['quarry.agent.maxTurns'].maximum);
  assert.equal(s.agent.temperature, props['quarry.agent.temperature'].minimum);
  assert.equal(s.observation.maxRows, 50);
  assert.equal(s.observation.maxChars, props['quarry.observation.maxChars'].minimum);
  assert.equal(s.query.timeoutMs, 5000);
  assert.equal(s.databases.glob, DEFAULT_SETTINGS.databases.glob);
  assert.equal(s.trajectories.store, '.quarry/trajectories/asked.jsonl');
  assert.equal(s.trajectories.save, true);
  assert.deepEqual(s.targets, {});
});
