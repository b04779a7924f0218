// Workspace Trust, the decisions (no `vscode` here, so they are unit-tested): a cloned repository is untrusted input,
// and in an untrusted workspace Quarry reads nothing from .quarry/ or the workspace's settings that can start a
// process or reach a host. Each gated feature names what it would have read and why that is unsafe; the words the
// refusals and the once-a-session notice use live here too. src/extension/trust.ts shows them.

/** The features that stay off until the workspace is trusted. */
export type GatedFeature =
  | 'train'
  | 'cancelJob'
  | 'followJobs'
  | 'loadCheckpoint'
  | 'unloadCheckpoint'
  | 'evaluateCheckpoint'
  | 'checkEnvironment';

interface GateInfo {
  /** What is off, as the start of a sentence after "Quarry: " ("training"). */
  what: string;
  /** Why: what the untrusted workspace controls that this would act on. */
  why: string;
}

export const GATES: Readonly<Record<GatedFeature, GateInfo>> = {
  train: {
    what: 'training',
    why:
      '.quarry/targets.json could run commands on this machine (or over ssh, Slurm, Ray), and the wizard runs the ' +
      "workspace's Python",
  },
  cancelJob: {
    what: 'cancelling jobs',
    why: "a job's .quarry/jobs/*/job.json names the processes to signal and the target (ssh, Slurm, Ray) to reach",
  },
  followJobs: {
    what: 'following running jobs',
    why: "asking a job's target for its state reaches the hosts .quarry/targets.json names",
  },
  loadCheckpoint: {
    what: 'loading checkpoints',
    why:
      "it runs the workspace's Python (.venv or quarry.python) to export the checkpoint or to start a model server " +
      'on this machine',
  },
  unloadCheckpoint: {
    what: 'unloading checkpoints',
    why: '.quarry/models.json names the server process (and ssh tunnel) that unloading would stop',
  },
  evaluateCheckpoint: {
    what: 'evaluating checkpoints',
    why: '.quarry/models.json names the model server the benchmark would send every question to',
  },
  checkEnvironment: {
    what: 'checking the training environment',
    why: "it runs the workspace's Python interpreter (.venv or quarry.python)",
  },
};

/** The action that opens VS Code's Workspace Trust editor, and the command it runs. */
export const TRUST_ACTION = 'Trust Folder…';
export const TRUST_COMMAND = 'workbench.trust.manage';

/** The message a refused command shows: "Quarry: training is off in an untrusted workspace: <why>." */
export function refusalMessage(feature: GatedFeature): string {
  const g = GATES[feature];
  return `Quarry: ${g.what} is off in an untrusted workspace: ${g.why}.`;
}

/** The notice shown once a session when Quarry starts in an untrusted workspace. */
export const RESTRICTED_NOTICE =
  'Quarry: this folder is not trusted, so training, job control, loading, unloading and evaluating checkpoints and ' +
  'the training environment check are off (.quarry/ could make them run commands or reach hosts). Asking, running ' +
  'SQL, replay, diagnostics and labeling work.';

/** Whether a model registry entry may be offered in an untrusted workspace: ONNX runs in-process, a server is off. */
export function registryEntryAllowed(spec: string, trusted: boolean): boolean {
  return trusted || spec.startsWith('onnx:');
}
