// The model registry (.quarry/models.json): an absent file is empty, entries round-trip, bad files and bad entries are
// refused with the problem named, writes leave no temporary file, evaluations accumulate per report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  ModelRegistry,
  ModelRegistryError,
  describeProvenance,
  registryProblem,
  MODELS_SCHEMA,
  type RegisteredModel,
} from '../../../src/core/training/modelRegistry';
import { tempDir } from '../../helpers/fixtures';

function entry(name: string, over: Partial<RegisteredModel> = {}): RegisteredModel {
  return {
    name,
    spec: `onnx:/models/${name}`,
    form: 'onnx',
    loadedAt: '2026-01-01T00:00:00.000Z',
    provenance: {
      checkpoint: `/runs/${name}/checkpoint-2`,
      jobId: 'job-1',
      step: 2,
      engine: 'trl',
      recipe: 'sft-tiny',
      baseModel: 'media/models/tiny-sql',
      data: [{ path: '/data/sft.jsonl', sha256: 'ab'.repeat(32) }],
      runJson: `/runs/${name}/run.json`,
    },
    parity: {
      equal: false,
      cases: 3,
      differing: 1,
      firstDivergence: { case: 1, position: 7, expected: 10, got: 11 },
      against: 'onnx',
      checkedAt: '2026-01-01T00:00:00.000Z',
    },
    server: null,
    evaluations: [],
    ...over,
  };
}

test('an absent registry is empty; put, get, replace and remove round-trip through the file', () => {
  const ws = tempDir('quarry-models-');
  const reg = new ModelRegistry(ws);
  assert.deepEqual(reg.list(), []);
  reg.put(entry('a'));
  reg.put(entry('b'));
  reg.put(entry('a', { spec: 'onnx:/elsewhere' }));
  const again = new ModelRegistry(ws);
  assert.deepEqual(
    again.list().map((m) => [m.name, m.spec]),
    [
      ['a', 'onnx:/elsewhere'],
      ['b', 'onnx:/models/b'],
    ],
  );
  assert.equal(again.remove('a')?.name, 'a');
  assert.equal(again.remove('a'), undefined);
  assert.deepEqual(
    new ModelRegistry(ws).list().map((m) => m.name),
    ['b'],
  );
  assert.deepEqual(
    readdirSync(dirname(reg.file)).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file is left beside the registry',
  );
});

test('a registry file that is not JSON, of another schema, or with a bad entry is refused naming the problem', () => {
  const ws = tempDir('quarry-models-');
  const reg = new ModelRegistry(ws);
  mkdirSync(dirname(reg.file), { recursive: true });
  writeFileSync(reg.file, '{"schema": "quarry.models/1", "models": [');
  assert.throws(
    () => reg.list(),
    (e: Error) => e instanceof ModelRegistryError && /is not JSON/.test(e.message),
  );
  writeFileSync(reg.file, JSON.stringify({ schema: 'quarry.models/0', models: [] }));
  assert.throws(() => reg.list(), /schema must be "quarry.models\/1"/);
  writeFileSync(reg.file, JSON.stringify({ schema: MODELS_SCHEMA, models: [{ ...entry('x'), spec: 'gguf:/m' }] }));
  assert.throws(() => reg.list(), /models\[0\]: spec must be/);
  assert.throws(() => reg.put(entry('y')), /spec must be/, 'a write does not paper over a bad file');
});

test('registryProblem names each kind of bad entry', () => {
  const doc = (m: unknown) => ({ schema: MODELS_SCHEMA, models: [m] });
  assert.equal(registryProblem(doc(entry('ok'))), null);
  assert.match(registryProblem(doc(entry('bad name!'))) ?? '', /bad name/);
  assert.match(registryProblem({ schema: MODELS_SCHEMA, models: [entry('a'), entry('a')] }) ?? '', /used twice/);
  assert.match(registryProblem(doc({ ...entry('a'), form: 'gguf' })) ?? '', /form must be/);
  assert.match(
    registryProblem(doc({ ...entry('a'), provenance: { ...entry('a').provenance, data: [{ path: 'x' }] } })) ?? '',
    /provenance.data/,
  );
  assert.match(registryProblem(doc({ ...entry('a'), parity: { equal: 'yes' } })) ?? '', /parity.equal/);
  assert.match(
    registryProblem(doc({ ...entry('a'), server: { kind: 'ollama', host: 'local', pid: 1, port: 2, command: [] } })) ??
      '',
    /server.kind/,
  );
  assert.match(registryProblem(doc({ ...entry('a'), evaluations: [{ report: 'r' }] })) ?? '', /evaluation\./);
});

test('evaluations accumulate per report; a rerun of the same report replaces its entry', () => {
  const ws = tempDir('quarry-models-');
  const reg = new ModelRegistry(ws);
  reg.put(entry('a'));
  const ev = (report: string, greedy: number) => ({
    report,
    dataset: 'spider:/d/dev.json',
    protocol: 'skyrl',
    samples: 1,
    items: 4,
    ex: { greedy, majority: null, passAtK: null },
    at: '2026-01-02T00:00:00.000Z',
  });
  reg.addEvaluation('a', ev('/r1/report.json', 0.25));
  reg.addEvaluation('a', ev('/r2/report.json', 0.5));
  reg.addEvaluation('a', ev('/r1/report.json', 0.75));
  assert.deepEqual(
    reg.require('a').evaluations.map((e) => [e.report, e.ex.greedy]),
    [
      ['/r2/report.json', 0.5],
      ['/r1/report.json', 0.75],
    ],
  );
  assert.throws(() => reg.addEvaluation('nope', ev('/r', 0)), /no model "nope"/);
  assert.throws(() => reg.require('nope'), /there are: a/);
  assert.ok(existsSync(reg.file));
});

test('describeProvenance says job, step, engine, recipe, base model and parity in one line', () => {
  assert.equal(
    describeProvenance(entry('a')),
    'job job-1 · step 2 · trl · recipe sft-tiny · from tiny-sql · parity differs at token 7',
  );
  assert.equal(
    describeProvenance(entry('b', { parity: { ...entry('b').parity!, equal: true, firstDivergence: null } })),
    'job job-1 · step 2 · trl · recipe sft-tiny · from tiny-sql · parity ok',
  );
});

test('model names must be usable as folder names', () => {
  const ws = tempDir('quarry-models-');
  assert.throws(() => new ModelRegistry(ws).put(entry('../up')), /bad name/);
  assert.equal(existsSync(join(ws, '.quarry', 'models.json')), false);
});
