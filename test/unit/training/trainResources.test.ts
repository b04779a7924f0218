// Train a Model… on the hardware it has: the resources step starts from the GPUs the target's Python sees (on a
// machine without CUDA: the CPU, run with --cpu, never the recipe's 8 GPUs), and the pre-flight refuses a launch
// the target cannot run before anything is written or started, saying why and what to choose instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { prepareJob, type WizardChoices } from '../../../src/app/train/wizard';
import { hardwareProblems, resourceOptions, specHardwareProblems } from '../../../src/app/train/resources';
import { gpusSeen, probeGpus, type SeenGpus } from '../../../src/core/training/gpus';
import { tempDir } from '../../helpers/fixtures';

const CPU_ONLY: SeenGpus = { count: 0, how: 'torch 2.15.0 sees no CUDA device (built for CUDA 13.2)' };
const TWO: SeenGpus = { count: 2, how: 'torch sees 2 CUDA device(s): H100, H100' };

const choices = (over: Partial<WizardChoices>): WizardChoices => ({
  recipe: 'sql-trail',
  model: '/models/tiny',
  data: '/data/sft',
  engine: 'trl',
  target: 'local',
  gpus: 8,
  nodes: 1,
  maxSteps: 3,
  ...over,
});

test('a GPU launch on a machine without CUDA is refused by the pre-flight, before anything is written', async () => {
  const ws = tempDir();
  const env = { workspace: ws, python: '/venv/bin/python', repoRoot: ws, gpus: CPU_ONLY };
  const sft = await prepareJob(choices({ gpus: 8 }), env);
  assert.equal(sft.errors.length, 1, sft.errors.join('\n'));
  assert.match(sft.errors[0], /^\[hardware\] the launch asks for 8 GPUs and local has no CUDA device/);
  assert.match(sft.errors[0], /choose CPU only \(--cpu\)/);
  assert.equal(existsSync(sft.outDir), false, 'nothing written');
  const verl = await prepareJob(choices({ engine: 'verl', data: join(ws, 'rl') }), env);
  assert.match(verl.errors[0], /verl trains on CUDA GPUs and local has none .*train with TRL on the CPU/);
  // The CPU run goes, with --cpu and no CUDA devices.
  const cpu = await prepareJob(choices({ gpus: 0 }), env);
  assert.deepEqual(cpu.errors, []);
  assert.ok(cpu.spec.command.includes('--cpu'));
  assert.deepEqual(cpu.spec.env, {});
  // Where there are GPUs, as many as there are.
  assert.deepEqual(hardwareProblems({ engine: 'trl', target: 'local', gpus: 2 }, TWO), []);
  assert.match(hardwareProblems({ engine: 'verl', target: 'local', gpus: 8 }, TWO)[0], /at most 2 GPUs/);
  assert.deepEqual(hardwareProblems({ engine: 'verl', target: 'gpu-box', gpus: 8 }, null), [], 'not known: not judged');
});

test('the resources step starts from what the target has', () => {
  const cpuOnly = resourceOptions('trl', 8, CPU_ONLY, 'local');
  assert.deepEqual(
    cpuOnly.map((o) => o.gpus),
    [0],
    'no CUDA: the CPU, and no GPU count to pick by mistake',
  );
  assert.match(cpuOnly[0].description, /local has no CUDA device: torch 2\.15\.0 sees no CUDA device/);
  assert.deepEqual(resourceOptions('verl', 8, CPU_ONLY, 'local'), [], 'verl has nothing to run on');
  const two = resourceOptions('trl', 8, TWO, 'local');
  assert.deepEqual(
    two.map((o) => [o.gpus, o.description]),
    [
      [2, 'all local has; the recipe used 8'],
      [1, ''],
      [0, 'slow; for a tiny model or a try (--cpu)'],
    ],
  );
  const unknown = resourceOptions('skyrl', 8, null, 'gpu-box');
  assert.deepEqual(
    unknown.map((o) => [o.label, o.description]),
    [
      ['8 GPUs per node', "the recipe's hardware"],
      ['1 GPU per node', ''],
      ['2 GPUs per node', ''],
      ['4 GPUs per node', ''],
    ],
  );
});

test('job.json edited in the review step is checked again: --cpu removed on a machine without CUDA', async () => {
  const ws = tempDir();
  const env = { workspace: ws, python: '/venv/bin/python', repoRoot: ws, gpus: CPU_ONLY };
  const { spec } = await prepareJob(choices({ gpus: 0 }), env);
  assert.deepEqual(specHardwareProblems(spec, CPU_ONLY), []);
  const edited = { ...spec, command: spec.command.filter((a) => a !== '--cpu') };
  assert.match(specHardwareProblems(edited, CPU_ONLY)[0], /asks for 1 GPU and local has no CUDA device/);
  const devices = { ...spec, env: { CUDA_VISIBLE_DEVICES: '0,1,2' } };
  assert.match(specHardwareProblems(devices, TWO)[0], /asks for 3 GPUs and local has 2 GPUs/);
  assert.deepEqual(specHardwareProblems({ ...edited, target: 'gpu-box' }, null), []);
  assert.match(
    specHardwareProblems({ target: 'local', engine: 'skyrl', command: ['bash', 'launch.sh'] }, CPU_ONLY)[0],
    /skyrl trains on CUDA GPUs/,
  );
});

test("the GPUs seen: torch's CUDA devices, else nvidia-smi's, else none; a real probe of this machine", async () => {
  const torch = (available: boolean, count: number) => ({
    available,
    count,
    names: Array(count).fill('H200'),
    cudaVersion: '13.2',
  });
  assert.equal(gpusSeen({ torchCuda: torch(true, 2), nvidiaSmi: null }).count, 2);
  assert.deepEqual(gpusSeen({ torchCuda: torch(false, 0), nvidiaSmi: ['GPU 0: H200'], torchVersion: '2.15.0' }), {
    count: 0,
    how: 'torch 2.15.0 sees no CUDA device (built for CUDA 13.2)',
  });
  assert.equal(gpusSeen({ torchCuda: null, nvidiaSmi: ['GPU 0: H200 (UUID: x)'] }).count, 1);
  assert.deepEqual(gpusSeen({ torchCuda: null, nvidiaSmi: null }), {
    count: 0,
    how: 'no torch with CUDA and no nvidia-smi',
  });
  // A real probe: an interpreter that is not there leaves nvidia-smi to decide; python3 answers for itself.
  const missing = await probeGpus('/nonexistent/python');
  assert.ok(Number.isInteger(missing.count) && missing.count >= 0, missing.how);
  const here = await probeGpus('python3');
  assert.ok(Number.isInteger(here.count) && here.count >= 0 && here.how.length > 0, here.how);
});
