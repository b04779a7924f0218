// The Python environment training runs in: which interpreter Quarry uses, and what it has (each engine's version or
// why it is missing, the GPUs it sees). `quarry doctor` and "Quarry: Check Training Environment" both report this.
// The probe runs in the chosen interpreter as a child process with a time limit; nothing here imports `vscode`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Where the interpreter came from, most specific first. */
type PythonSource = 'flag' | 'setting' | 'python-extension' | 'venv' | 'path';

interface PythonChoice {
  path: string;
  source: PythonSource;
}

interface PythonCandidates {
  /** `--python` on the command line. */
  flag?: string;
  /** The `quarry.python` setting (or QUARRY_PYTHON for the CLI). */
  setting?: string;
  /** The Python extension's selected interpreter, when that extension is installed. */
  pythonExtension?: string;
  /** Folders whose `.venv/` is looked for (the workspace folders; the CLI's working directory and its parents). */
  searchRoots: string[];
}

/** The interpreter inside a virtual environment folder, per platform. */
export function venvPython(venvDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? join(venvDir, 'Scripts', 'python.exe') : join(venvDir, 'bin', 'python');
}

/** Each root and its parents, nearest first, without repeats (a CLI run from trainer/ still finds the root .venv). */
function withParents(roots: string[]): string[] {
  const out: string[] = [];
  for (const root of roots) {
    let dir = resolve(root);
    for (;;) {
      if (!out.includes(dir)) out.push(dir);
      const up = dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  return out;
}

/**
 * The interpreter to use: the flag, else the setting, else the Python extension's selection, else the nearest
 * `.venv/`, else `python3` from PATH (which the probe may then find lacking).
 */
export function choosePython(c: PythonCandidates): PythonChoice {
  const given = (v: string | undefined): v is string => typeof v === 'string' && v.trim() !== '';
  if (given(c.flag)) return { path: c.flag.trim(), source: 'flag' };
  if (given(c.setting)) return { path: c.setting.trim(), source: 'setting' };
  if (given(c.pythonExtension)) return { path: c.pythonExtension.trim(), source: 'python-extension' };
  for (const dir of withParents(c.searchRoots)) {
    const candidate = venvPython(join(dir, '.venv'));
    if (existsSync(candidate)) return { path: candidate, source: 'venv' };
  }
  return { path: process.platform === 'win32' ? 'python' : 'python3', source: 'path' };
}

/** An engine the training half can use: its distribution (for the version) and its import name (to try it). */
interface EngineSpec {
  name: string;
  distribution: string;
  module: string;
  /** The quarry-trainer extra that installs it. */
  extra: string;
  /** Needed for anything to train here (SFT/GRPO with TRL). */
  required: boolean;
}

const ENGINES: readonly EngineSpec[] = [
  { name: 'quarry-trainer', distribution: 'quarry-trainer', module: 'quarry_trainer', extra: '', required: true },
  { name: 'torch', distribution: 'torch', module: 'torch', extra: 'trl', required: true },
  { name: 'transformers', distribution: 'transformers', module: 'transformers', extra: 'trl', required: true },
  { name: 'trl', distribution: 'trl', module: 'trl', extra: 'trl', required: true },
  { name: 'peft', distribution: 'peft', module: 'peft', extra: 'trl', required: false },
  { name: 'accelerate', distribution: 'accelerate', module: 'accelerate', extra: 'trl', required: false },
  { name: 'datasets', distribution: 'datasets', module: 'datasets', extra: 'trl', required: false },
  { name: 'verl', distribution: 'verl', module: 'verl', extra: 'verl', required: false },
  { name: 'skyrl-gym', distribution: 'skyrl-gym', module: 'skyrl_gym', extra: 'skyrl', required: false },
  { name: 'skyrl-train', distribution: 'skyrl-train', module: 'skyrl_train', extra: 'skyrl-train', required: false },
  { name: 'ray', distribution: 'ray', module: 'ray', extra: 'ray', required: false },
  { name: 'vllm', distribution: 'vllm', module: 'vllm', extra: '', required: false },
  { name: 'onnx', distribution: 'onnx', module: 'onnx', extra: 'export', required: false },
  { name: 'onnxscript', distribution: 'onnxscript', module: 'onnxscript', extra: 'export', required: false },
  { name: 'onnxruntime', distribution: 'onnxruntime', module: 'onnxruntime', extra: 'export', required: false },
];

interface EngineStatus {
  name: string;
  /** The installed distribution's version, or null when it is not installed. */
  version: string | null;
  /** Whether `import module` worked. */
  imports: boolean;
  /** Why it is missing or does not import (the exception's type and first line). */
  error?: string;
  required: boolean;
  extra: string;
}

export interface GpuInfo {
  /** torch's view: null when torch is missing. */
  torchCuda: { available: boolean; count: number; names: string[]; cudaVersion: string | null } | null;
  /** `nvidia-smi -L`'s lines, or null when it is not there. */
  nvidiaSmi: string[] | null;
}

export interface PythonEnvReport {
  python: PythonChoice;
  /** False when the interpreter could not be started or the probe failed; `problem` says why. */
  ok: boolean;
  problem?: string;
  version?: string;
  executable?: string;
  engines: EngineStatus[];
  gpus: GpuInfo;
  /** What to run to fix what is missing, one line each. */
  fixes: string[];
  /** Engines left out on purpose (they belong in another environment), and why. */
  notes: string[];
  /** Whether everything `required` is there. */
  ready: boolean;
}

// Runs in the user's interpreter. Prints one JSON line. Each engine: version from the package metadata, then an
// import (an installed engine can still fail to import, e.g. a missing optional dependency). Python >= 3.8 syntax.
const PROBE = `
import json, sys, importlib, importlib.metadata as md
specs = json.loads(sys.argv[1])
out = {"version": sys.version.split()[0], "executable": sys.executable, "engines": [], "torch": None}
for s in specs:
    e = {"name": s["name"], "version": None, "imports": False}
    try:
        e["version"] = md.version(s["distribution"])
    except Exception:
        pass
    if e["version"] is not None:
        try:
            importlib.import_module(s["module"])
            e["imports"] = True
        except BaseException as x:
            first = (str(x).strip().splitlines() or [""])[0][:300]
            e["error"] = type(x).__name__ + (": " + first if first else "")
    else:
        e["error"] = "not installed"
    out["engines"].append(e)
try:
    import torch
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    out["torch"] = {"available": bool(torch.cuda.is_available()), "count": n,
                    "names": [torch.cuda.get_device_name(i) for i in range(n)], "cudaVersion": torch.version.cuda}
except BaseException:
    pass
print(json.dumps(out))
`;

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
  timedOut: boolean;
}

export function run(cmd: string, args: string[], timeoutMs: number, signal?: AbortSignal): Promise<RunResult> {
  return new Promise((done) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let settled = false;
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONWARNINGS: 'ignore' },
    });
    const finish = (r: RunResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      done(r);
    };
    const onAbort = (): void => {
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < 1_000_000) stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 100_000) stderr += d;
    });
    child.on('error', (error) => finish({ code: null, stdout, stderr, error, timedOut }));
    child.on('close', (code) => finish({ code, stdout, stderr, timedOut }));
  });
}

/** `nvidia-smi -L` lines, or null when the tool is not on PATH (no NVIDIA driver here). */
export async function nvidiaSmi(timeoutMs: number): Promise<string[] | null> {
  const r = await run('nvidia-smi', ['-L'], timeoutMs);
  if (r.error || r.code !== 0) return null;
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

interface ProbeOptions {
  /** The whole probe's limit (importing torch and verl takes tens of seconds on a cold cache). Default 180 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * The repository's root when Quarry runs from a checkout (its trainer/ and setup script then appear in the fixes).
   */
  repoRoot?: string;
}

/** How to install what is missing, for this interpreter. */
function fixesFor(report: Pick<PythonEnvReport, 'python' | 'engines' | 'ok'>, repoRoot?: string): string[] {
  const trainerDir =
    repoRoot && existsSync(join(repoRoot, 'trainer', 'pyproject.toml')) ? join(repoRoot, 'trainer') : undefined;
  const setup = trainerDir
    ? `npm run setup:python (in ${repoRoot}) makes .venv/ with every engine, pinned by trainer/uv.lock`
    : undefined;
  if (!report.ok) {
    return [
      setup ?? 'install Python 3.10 or newer, then the quarry-trainer package with the engines you need',
      'or point the quarry.python setting (CLI: --python or QUARRY_PYTHON) at an interpreter that has them',
    ];
  }
  const missing = report.engines.filter((e) => e.version === null || !e.imports);
  const fixes: string[] = [];
  // skyrl-train and vllm never go beside TRL and verl (see notesFor); the other extras install into this interpreter.
  const extras = [
    ...new Set(missing.filter((e) => e.extra && e.extra !== 'skyrl-train' && e.version === null).map((e) => e.extra)),
  ];
  if (extras.length > 0 || missing.some((e) => e.name === 'quarry-trainer')) {
    if (setup) fixes.push(setup);
    const target = trainerDir
      ? `${trainerDir}[${extras.join(',') || 'trl'}]`
      : `quarry-trainer[${extras.join(',') || 'trl'}]`;
    fixes.push(`${report.python.path} -m pip install "${target}"`);
  }
  for (const e of missing.filter((m) => m.version !== null && !m.imports)) {
    fixes.push(
      `${e.name} ${e.version} is installed but does not import (${e.error ?? 'unknown error'}): reinstall ` +
        `it with its extra`,
    );
  }
  return fixes;
}

/** What is missing on purpose: engines that belong in another environment, said so rather than offered as fixes. */
function notesFor(engines: EngineStatus[]): string[] {
  const absent = (name: string): boolean => engines.some((e) => e.name === name && e.version === null);
  const notes: string[] = [];
  if (absent('skyrl-train')) {
    notes.push(
      'skyrl-train needs Python 3.12 exactly and pins datasets 4.0 (TRL needs >= 4.7): it gets its own ' +
        "environment on the training hosts (extra skyrl-train); Quarry's SkyRL adapter needs only skyrl-gym",
    );
  }
  if (absent('vllm')) {
    notes.push(
      "vllm ships CUDA builds and pins its own torch and transformers: install it on GPU hosts, in the job's " +
        'environment; here serving uses transformers',
    );
  }
  return notes;
}

/**
 * Probes `python` and reports what it has. Never throws: a missing or broken interpreter is a report with ok = false.
 */
export async function probePythonEnv(python: PythonChoice, opts: ProbeOptions = {}): Promise<PythonEnvReport> {
  const timeoutMs = opts.timeoutMs ?? 180_000;
  const specs = ENGINES.map(({ name, distribution, module }) => ({ name, distribution, module }));
  const [r, smi] = await Promise.all([
    run(python.path, ['-c', PROBE, JSON.stringify(specs)], timeoutMs, opts.signal),
    nvidiaSmi(10_000),
  ]);
  const base = { python, gpus: { torchCuda: null, nvidiaSmi: smi } as GpuInfo };
  let problem: string | undefined;
  let parsed:
    | {
        version: string;
        executable: string;
        engines: { name: string; version: string | null; imports: boolean; error?: string }[];
        torch: GpuInfo['torchCuda'];
      }
    | undefined;
  if (r.error) {
    problem =
      (r.error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `no Python interpreter at '${python.path}'`
        : `cannot start '${python.path}': ${r.error.message}`;
  } else if (r.timedOut) {
    problem = `the probe did not finish within ${Math.round(timeoutMs / 1000)} s (importing the engines hung)`;
  } else if (opts.signal?.aborted) {
    problem = 'cancelled';
  } else {
    const line = r.stdout.trim().split('\n').pop() ?? '';
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      const why = r.stderr.trim().split('\n').slice(-3).join(' ').slice(0, 400);
      problem = `'${python.path}' did not run the probe (exit ${r.code}): ${why || 'no output'}`;
    }
  }
  if (!parsed) {
    const report = {
      ...base,
      ok: false,
      problem,
      engines: [] as EngineStatus[],
      ready: false,
      fixes: [] as string[],
      notes: [] as string[],
    };
    report.fixes = fixesFor(report, opts.repoRoot);
    return report;
  }
  const engines: EngineStatus[] = ENGINES.map((spec) => {
    const e = parsed.engines.find((x) => x.name === spec.name);
    return {
      name: spec.name,
      version: e?.version ?? null,
      imports: e?.imports ?? false,
      ...(e?.error ? { error: e.error } : {}),
      required: spec.required,
      extra: spec.extra,
    };
  });
  const report: PythonEnvReport = {
    ...base,
    gpus: { torchCuda: parsed.torch, nvidiaSmi: smi },
    ok: true,
    version: parsed.version,
    executable: parsed.executable,
    engines,
    fixes: [],
    notes: notesFor(engines),
    ready: engines.every((e) => !e.required || e.imports),
  };
  report.fixes = fixesFor(report, opts.repoRoot);
  return report;
}

const SOURCE_TEXT: Record<PythonSource, string> = {
  flag: '--python',
  setting: 'the quarry.python setting',
  'python-extension': "the Python extension's selected interpreter",
  venv: 'the nearest .venv/',
  path: 'python3 on PATH',
};

/** The report as text: interpreter, a table of engines, GPUs, and what to run. */
export function renderPythonEnvReport(r: PythonEnvReport): string {
  const lines: string[] = [];
  lines.push(`Python: ${r.python.path} (${SOURCE_TEXT[r.python.source]})`);
  if (!r.ok) {
    lines.push(`  problem: ${r.problem ?? 'unknown'}`);
  } else {
    lines.push(`  Python ${r.version}, ${r.executable}`);
    lines.push('');
    const w = Math.max(...r.engines.map((e) => e.name.length));
    const vw = Math.max(7, ...r.engines.map((e) => (e.version ?? '-').length));
    lines.push(`  ${'engine'.padEnd(w)}  ${'version'.padEnd(vw)}  status`);
    for (const e of r.engines) {
      const status = e.imports
        ? 'ok'
        : e.version === null
          ? `missing${e.extra ? ` (extra: ${e.extra})` : ''}`
          : `does not import: ${e.error}`;
      lines.push(
        `  ${e.name.padEnd(w)}  ${(e.version ?? '-').padEnd(vw)}  ${status}` +
          `${e.required && !e.imports ? '  [required]' : ''}`,
      );
    }
  }
  lines.push('');
  const t = r.gpus.torchCuda;
  const torchGpus =
    t === null
      ? 'torch not available'
      : t.available
        ? `${t.count} CUDA device(s): ${t.names.join(', ')}`
        : `no CUDA device (torch built for CUDA ${t.cudaVersion ?? 'none'})`;
  const smi = r.gpus.nvidiaSmi === null ? 'nvidia-smi not found' : `${r.gpus.nvidiaSmi.length} from nvidia-smi`;
  lines.push(`GPUs: ${torchGpus}; ${smi}`);
  lines.push(
    r.ready ? 'Ready: TRL training can run with this interpreter.' : 'Not ready: a required engine is missing.',
  );
  if (r.fixes.length > 0) {
    lines.push('');
    lines.push('To fix:');
    for (const f of r.fixes) lines.push(`  - ${f}`);
  }
  if (r.notes.length > 0) {
    lines.push('');
    lines.push('Notes:');
    for (const n of r.notes) lines.push(`  - ${n}`);
  }
  return lines.join('\n');
}
