// The wizard's resources step and the hardware half of its pre-flight: what to offer, starting from the GPUs the
// target has (on a machine without CUDA: the CPU, which TRL runs with --cpu, never the recipe's 8 GPUs), and which
// launches the target cannot run (a GPU launch where there is none), refused with a clear message before anything
// starts. `seen` is null where the GPUs are not known (a remote target that was not asked): the recipe's then lead.
import type { JobSpec } from '../../core/training/jobs/job';
import type { SeenGpus } from '../../core/training/gpus';

/** The wizard's engines (WizardEngine in app/train/wizard.ts; not imported: the modules would import each other). */
type WizardEngine = 'trl' | 'verl' | 'skyrl';

interface ResourceOption {
  /** GPUs per node; 0 is the CPU (TRL only). */
  gpus: number;
  label: string;
  description: string;
}

const gpuWord = (n: number) => `${n} GPU${n === 1 ? '' : 's'}`;

/** The GPU counts and CPU the resources step offers, the one to start from first. */
export function resourceOptions(
  engine: WizardEngine,
  recipeGpus: number | null,
  seen: SeenGpus | null,
  target: string,
): ResourceOption[] {
  const perNode = engine === 'trl' ? '' : ' per node';
  const cpu: ResourceOption = {
    gpus: 0,
    label: 'CPU only',
    description: 'slow; for a tiny model or a try (--cpu)',
  };
  const gpu = (n: number, description: string): ResourceOption => ({
    gpus: n,
    label: `${gpuWord(n)}${perNode}`,
    description,
  });
  const recipeNote = (n: number) => (n === recipeGpus ? "the recipe's hardware" : '');
  if (seen === null) {
    const counts = [...new Set([recipeGpus ?? 1, 1, 2, 4, 8])].filter((n) => n > 0);
    return [...counts.map((n) => gpu(n, recipeNote(n))), ...(engine === 'trl' ? [cpu] : [])];
  }
  if (seen.count === 0) {
    // Only the CPU: TRL trains there; verl and SkyRL cannot (the pre-flight says so), and no GPU count is offered.
    return engine === 'trl' ? [{ ...cpu, description: `${target} has no CUDA device: ${seen.how}` }] : [];
  }
  const first = Math.min(seen.count, recipeGpus ?? seen.count);
  const counts = [...new Set([first, seen.count, 1, 2, 4, 8])].filter((n) => n > 0 && n <= seen.count);
  const describe = (n: number): string => {
    const parts = n === seen.count ? [`all ${target} has`] : [];
    if (n === recipeGpus) parts.push("the recipe's hardware");
    else if (n === first && recipeGpus !== null && recipeGpus > seen.count) parts.push(`the recipe used ${recipeGpus}`);
    return parts.join('; ');
  };
  const options = counts.map((n) => gpu(n, describe(n)));
  return [...options, ...(engine === 'trl' ? [cpu] : [])];
}

/**
 * Why `target` cannot run a launch on `gpus` GPUs per node (empty when it can, or when its GPUs are not known). A GPU
 * launch on a machine without CUDA fails minutes in (TRL on transformers' "Your setup doesn't support bf16/gpu", verl
 * and SkyRL placing their workers): said here instead, before anything starts.
 */
export function hardwareProblems(
  c: { engine: WizardEngine; target: string; gpus: number },
  seen: SeenGpus | null,
): string[] {
  if (seen === null) return [];
  if (c.engine !== 'trl' && seen.count === 0) {
    return [
      `${c.engine} trains on CUDA GPUs and ${c.target} has none (${seen.how}): train with TRL on the CPU, ` +
        'or choose a target with GPUs',
    ];
  }
  if (c.gpus > seen.count) {
    const fix = seen.count === 0 ? 'choose CPU only (--cpu)' : `choose at most ${gpuWord(seen.count)}`;
    return [
      `the launch asks for ${gpuWord(c.gpus)}${c.engine === 'trl' ? '' : ' per node'} and ${c.target} has ` +
        `${seen.count === 0 ? 'no CUDA device' : gpuWord(seen.count)} (${seen.how}): ${fix}`,
    ];
  }
  return [];
}

/**
 * The same check on the job as it will be submitted (job.json may have been edited in the review step): a TRL SFT
 * job without --cpu, or one given CUDA devices, on a target without them; verl or SkyRL there at all.
 */
export function specHardwareProblems(spec: JobSpec, seen: SeenGpus | null): string[] {
  if (seen === null) return [];
  const engine = spec.engine;
  if ((engine === 'verl' || engine === 'skyrl') && seen.count === 0) {
    return hardwareProblems({ engine, target: spec.target, gpus: 1 }, seen);
  }
  const devices = (spec.env?.CUDA_VISIBLE_DEVICES ?? '').split(',').filter((d) => d.trim() !== '').length;
  const sft = spec.command.includes('quarry_trainer.train.sft');
  const gpus = sft && seen.count === 0 && !spec.command.includes('--cpu') ? Math.max(1, devices) : devices;
  return engine === 'trl' || sft ? hardwareProblems({ engine: 'trl', target: spec.target, gpus }, seen) : [];
}
