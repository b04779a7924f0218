// What the service tests share: the services scripts/services/start.sh started (its services.json: the loopback sshd,
// Slurm and Ray head), a workspace whose .quarry/targets.json names them, the tiny SFT fixture, and waiting on a job.
// Without services.json the tests skip, saying how to start them; CI starts them (.ci/run), so there they run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FINAL_STATUSES, type JobRecord } from '../../src/core/training/jobs/job';
import type { TargetsConfig } from '../../src/core/training/jobs/targets';
import { JobStore, refreshJob } from '../../src/app/jobs';
import { tempDir } from '../helpers/fixtures';
import { type Maybe, until } from '../support/until';

export interface Services {
  dir: string;
  ssh: { host: string; config: string; port: number; key: string; knownHosts: string; pidFile: string };
  slurm: { conf: string; partition: string; gpusPerNode: number };
  ray: { address: string };
  fullDir: string | null;
  python: string;
  repo: string;
}

const SERVICES_JSON = process.env.QUARRY_SERVICES_JSON ?? '/tmp/quarry-services/services.json';
export const REPO = resolve(__dirname, '..', '..', '..');

/** The running services, or the reason to skip. */
export function services(): { svc: Services | null; skip: string | false } {
  if (!existsSync(SERVICES_JSON)) {
    return { svc: null, skip: `no ${SERVICES_JSON}: start the services with scripts/services/start.sh` };
  }
  const svc = JSON.parse(readFileSync(SERVICES_JSON, 'utf8')) as Services;
  // Slurm's commands (run here, and over ssh by sshd's SetEnv) find the cluster through SLURM_CONF.
  process.env.SLURM_CONF = svc.slurm.conf;
  return { svc, skip: false };
}

/** The four targets on the services, plus any extra. */
export function targetsFor(svc: Services, extra: TargetsConfig = {}): TargetsConfig {
  const ssh = { host: svc.ssh.host, sshConfig: svc.ssh.config };
  const remote = join(svc.dir, 'remote');
  return {
    box: { kind: 'ssh', ...ssh, remoteDir: `${remote}/ssh`, python: svc.python, minFreeMB: 10 },
    hpc: {
      kind: 'slurm',
      remoteDir: `${remote}/slurm`,
      partition: svc.slurm.partition,
      python: svc.python,
      minFreeMB: 10,
    },
    hpcssh: {
      kind: 'slurm',
      ...ssh,
      remoteDir: `${remote}/slurm-ssh`,
      partition: svc.slurm.partition,
      python: svc.python,
      minFreeMB: 10,
    },
    ray: { kind: 'ray', address: svc.ray.address, python: svc.python, remoteDir: `${remote}/ray` },
    ...extra,
  };
}

export function workspace(targets: TargetsConfig): { ws: string; store: JobStore } {
  const ws = tempDir('quarry-svc-');
  mkdirSync(join(ws, '.quarry'), { recursive: true });
  writeFileSync(join(ws, '.quarry', 'targets.json'), JSON.stringify(targets, null, 2));
  return { ws, store: new JobStore(ws) };
}

const QUESTIONS: Array<[string, string]> = [
  ['How many singers are there?', 'SELECT count(*) FROM singer'],
  ['List the names of all singers.', 'SELECT name FROM singer'],
  ['What is the average age of singers?', 'SELECT avg(age) FROM singer'],
  ['Which singers are older than 30?', 'SELECT name FROM singer WHERE age > 30'],
];

/** A four-conversation quarry.sft/1 file. */
export function sftFixture(dir: string): string {
  const file = join(dir, 'sft.jsonl');
  const rows = QUESTIONS.map(([q, sql]) => ({
    schema: 'quarry.sft/1',
    messages: [
      { role: 'user', content: `Question: ${q}`, loss: false },
      { role: 'assistant', content: `<sql>${sql}</sql>`, loss: true },
    ],
  }));
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

/** A TRL SFT run of the tiny model, four steps on the CPU, a checkpoint every two. */
export function sftCommand(data: string): string[] {
  return [
    'python',
    '-m',
    'quarry_trainer.train.sft',
    '--model',
    join(REPO, 'media', 'models', 'tiny-sql'),
    '--data',
    data,
    '--out',
    'out',
    '--max-steps',
    '4',
    '--batch-size',
    '2',
    '--save-steps',
    '2',
    '--cpu',
  ];
}

/** until() at the pace a remote target allows: asked every 300 ms, for 5 minutes unless told. */
export const untilRemote = <T>(what: string, f: () => Maybe<T> | Promise<Maybe<T>>, ms = 300_000): Promise<T> =>
  until(what, f, ms, 300);

/** Refreshes the job until it ends; returns its record. */
export async function finished(store: JobStore, id: string, ms = 600_000): Promise<JobRecord> {
  let job = store.get(id);
  await untilRemote(
    `job ${id} to end`,
    async () => {
      job = await refreshJob(store, id);
      return FINAL_STATUSES.includes(job.status);
    },
    ms,
  );
  return refreshJob(store, id);
}

export function metricSteps(store: JobStore, id: string): number[] {
  const file = join(store.dir(id), 'out', 'metrics.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { step: number }).step);
}

/** A Python one-liner job: `steps` metrics lines, one every `everyS` seconds, printing each. */
export function tickerCommand(steps: number, everyS: number, extra = ''): string[] {
  return [
    'python',
    '-c',
    [
      'import json, sys, time',
      extra,
      `for i in range(1, ${steps + 1}):`,
      '    print("tick", i, flush=True)',
      '    with open("out/metrics.jsonl", "a") as f: f.write(json.dumps({"step": i, "reward": i / 10}) + "\\n")',
      `    time.sleep(${everyS})`,
    ].join('\n'),
  ];
}
