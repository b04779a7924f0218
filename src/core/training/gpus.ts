// The GPUs a machine can train on, as the trainer will see them: torch's CUDA devices in the interpreter that runs the
// job (what "Check Training Environment" reports), else `nvidia-smi -L` when torch is missing there, else none. The
// Train a Model wizard starts its resources step from this, and its pre-flight refuses a GPU launch on a machine
// without one. Only torch is imported (seconds), not the engines.
import { nvidiaSmi, run, type GpuInfo } from './pythonEnv';

export interface SeenGpus {
  /** CUDA devices the job would see. */
  count: number;
  /** How that was found, in words ("torch 2.15.0 sees no CUDA device"). */
  how: string;
}

const PROBE = `
import json
out = {"torch": None}
try:
    import torch
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    out["torch"] = {"available": bool(torch.cuda.is_available()), "count": n,
                    "names": [torch.cuda.get_device_name(i) for i in range(n)], "cudaVersion": torch.version.cuda,
                    "version": torch.__version__}
except BaseException:
    pass
print(json.dumps(out))
`;

/** What a GPU report says the job can use: torch's view when torch is there, else nvidia-smi's, else none. */
export function gpusSeen(info: GpuInfo & { torchVersion?: string }): SeenGpus {
  const t = info.torchCuda;
  if (t) {
    const torch = `torch${info.torchVersion ? ` ${info.torchVersion}` : ''}`;
    if (t.available && t.count > 0)
      return { count: t.count, how: `${torch} sees ${t.count} CUDA device(s): ${t.names.join(', ')}` };
    return {
      count: 0,
      how: `${torch} sees no CUDA device${t.cudaVersion ? ` (built for CUDA ${t.cudaVersion})` : ' (a CPU build)'}`,
    };
  }
  const smi = info.nvidiaSmi;
  if (smi && smi.length > 0)
    return { count: smi.length, how: `nvidia-smi lists ${smi.length} GPU(s); torch is missing` };
  return { count: 0, how: 'no torch with CUDA and no nvidia-smi' };
}

/** Probes `python` (and nvidia-smi) for the GPUs a job started with it would see. Never throws. */
export async function probeGpus(
  python: string,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<SeenGpus> {
  const [r, smi] = await Promise.all([
    run(python, ['-c', PROBE], opts.timeoutMs ?? 60_000, opts.signal),
    nvidiaSmi(10_000),
  ]);
  type TorchView = NonNullable<GpuInfo['torchCuda']> & { version?: string };
  let torch: TorchView | null = null;
  try {
    torch = (JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { torch: TorchView | null }).torch;
  } catch {
    /* no interpreter, or it failed: nvidia-smi decides */
  }
  return gpusSeen({ torchCuda: torch, nvidiaSmi: smi, torchVersion: torch?.version });
}
