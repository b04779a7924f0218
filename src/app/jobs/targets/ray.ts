// The `ray` target: a Ray cluster's Jobs REST API, served by its dashboard. The routes and bodies are those of Ray
// 2.60's ray/dashboard/modules/job/job_head.py (POST /api/jobs/ with a JobSubmitRequest from common.py: entrypoint,
// submission_id, runtime_env, metadata, entrypoint_num_gpus; GET /api/jobs/{id} -> JobDetails with status, message,
// driver_exit_code; GET /api/jobs/{id}/logs -> {"logs": the whole driver log}; POST /api/jobs/{id}/stop; Ray stops a
// job with SIGTERM to its process group, then SIGKILL after RAY_JOB_STOP_WAIT_TIME_S, job_supervisor.py).
// The entrypoint is a small Python wrapper that runs the command in `<remoteDir>/<job id>/` on the cluster and prints,
// besides the command's own output, each whole new line of out/metrics.jsonl and each new checkpoint folder behind a
// marker, so logs, metrics and the checkpoint list all come back through the log endpoint (no shared filesystem
// needed). Pulls keep an offset into that log (pull.json), so nothing is read twice; when the head restarts and
// forgets the job, what was pulled stays and the job is marked lost.
import { existsSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import type { JobRecord, JobStatus } from '../../../core/training/jobs/job';
import type { RayTargetConfig } from '../../../core/training/jobs/targets';
import { shellQuote as q } from '../../../core/training/overrides';
import type { PullReport, StatusReport, Target } from './target';
import { underPullLock } from './pullLock';

const METRIC_MARK = '@@quarry-metric@@ ';
const CHECKPOINT_MARK = '@@quarry-checkpoint@@ ';

/** Runs argv[2:] in argv[1]; forwards SIGTERM; relays whole new metrics lines and new checkpoint folders. */
const RAY_WRAPPER = `
import os, re, signal, subprocess, sys, threading, time
d = sys.argv[1]; os.makedirs(os.path.join(d, "out"), exist_ok=True); os.chdir(d)
lock = threading.Lock()
def say(s):
    with lock:
        sys.stdout.write(s if s.endswith("\\n") else s + "\\n"); sys.stdout.flush()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
signal.signal(signal.SIGTERM, lambda *a: p.terminate())
def relay():
    for line in p.stdout: say(line)
t = threading.Thread(target=relay); t.start()
off = 0; seen = set()
def scan():
    global off
    try:
        with open("out/metrics.jsonl", "rb") as f:
            f.seek(off); data = f.read(); end = data.rfind(b"\\n") + 1
            for line in data[:end].decode("utf-8", "replace").splitlines(): say("${METRIC_MARK}" + line)
            off += end
    except FileNotFoundError: pass
    for n in sorted(os.listdir("out")):
        if n not in seen and re.match(r"^(checkpoint-\\d+|global_step_\\d+|final)$", n) and os.path.isdir("out/" + n):
            seen.add(n); say("${CHECKPOINT_MARK}" + n)
while p.poll() is None:
    scan(); time.sleep(0.5)
t.join(); scan(); sys.exit(p.returncode)
`;

interface PullState {
  logChars: number;
  checkpoints: string[];
}

function readState(dir: string): PullState {
  try {
    return JSON.parse(readFileSync(join(dir, 'pull.json'), 'utf8')) as PullState;
  } catch {
    return { logChars: 0, checkpoints: [] };
  }
}

const RAY_STATUS: Record<string, JobStatus> = {
  PENDING: 'running',
  RUNNING: 'running',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  STOPPED: 'cancelled',
};

export class RayTarget implements Target {
  readonly kind = 'ray' as const;

  constructor(
    readonly name: string,
    readonly config: RayTargetConfig,
  ) {}

  private url(path: string): string {
    return `${this.config.address.replace(/\/+$/, '')}${path}`;
  }

  // node:http rather than fetch: fetch adds Sec-Fetch-* headers, which the dashboard takes for a browser and refuses
  // on POST (is_browser_request in ray/dashboard/optional_utils.py).
  private call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string }> {
    const url = new URL(this.url(path));
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
        url,
        {
          method,
          headers: data ? { 'content-type': 'application/json', 'content-length': data.length } : {},
          timeout: 30_000,
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (b: Buffer) => parts.push(b));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
          res.on('error', (e) => reject(new RayUnreachable(`the Ray dashboard's answer was cut off (${e.message})`)));
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
      req.on('error', (e: NodeJS.ErrnoException) =>
        reject(new RayUnreachable(`cannot reach the Ray dashboard at ${this.config.address} (${e.code ?? e.message})`)),
      );
      req.end(data);
    });
  }

  private sid(job: JobRecord): string {
    return job.remote.rayJobId ?? `quarry-${job.id}`;
  }

  async check(_job: JobRecord): Promise<string[]> {
    try {
      const r = await this.call('GET', '/api/version');
      if (r.status !== 200) return [`${this.config.address}/api/version answered ${r.status}: is it a Ray dashboard?`];
      const v = JSON.parse(r.text) as { ray_version?: string };
      if (!v.ray_version) return [`${this.config.address} does not look like a Ray dashboard`];
    } catch (err) {
      return [(err as Error).message];
    }
    return [];
  }

  async submit(job: JobRecord, _dir: string, secrets: Record<string, string> = {}): Promise<void> {
    const rdir = `${(this.config.remoteDir ?? '/tmp/quarry-jobs').replace(/\/+$/, '')}/${job.id}`;
    const python = this.config.python ?? 'python3';
    const command = job.command.map((a, i) => (i === 0 && (a === 'python' || a === 'python3') ? python : a));
    // The wrapper travels base64-encoded, so the entrypoint Ray prints in the log stays one short line.
    const wrapper = `import base64; exec(base64.b64decode("${Buffer.from(RAY_WRAPPER).toString('base64')}"))`;
    const entrypoint = [python, '-c', wrapper, rdir, ...command].map((a) => q(a)).join(' ');
    // runtime_env env_vars is the Jobs API's only way to pass environment variables; secret values go there and
    // nowhere else (the Ray dashboard shows a job's runtime_env to whoever can reach it).
    const body = {
      entrypoint,
      submission_id: `quarry-${job.id}`,
      runtime_env: { env_vars: { ...job.env, ...secrets, QUARRY_JOB_ID: job.id, QUARRY_JOB_DIR: rdir } },
      metadata: { quarry_job: job.id, name: job.name },
      ...(job.resources?.gpus ? { entrypoint_num_gpus: job.resources.gpus } : {}),
    };
    const r = await this.call('POST', '/api/jobs/', body);
    if (r.status !== 200)
      throw new Error(`Ray refused the job (${r.status}): ${r.text.trim().split('\n').slice(-2).join(' / ')}`);
    const sid = (JSON.parse(r.text) as { submission_id: string }).submission_id;
    job.remote = { rayJobId: sid, dir: rdir, host: this.config.address };
  }

  async status(job: JobRecord, _dir: string): Promise<StatusReport> {
    let r: { status: number; text: string };
    try {
      r = await this.call('GET', `/api/jobs/${encodeURIComponent(this.sid(job))}`);
    } catch (err) {
      if (!(err instanceof RayUnreachable)) throw err;
      return { status: job.status, exitCode: job.exitCode, reason: `${err.message} (will retry)` };
    }
    if (r.status === 404) {
      if (job.status === 'cancelled') return { status: 'cancelled', exitCode: null, reason: 'cancelled' };
      return {
        status: 'lost',
        exitCode: null,
        reason: `the Ray cluster at ${this.config.address} no longer knows job ${this.sid(job)} (its head restarted?)`,
      };
    }
    if (r.status !== 200) return { status: job.status, exitCode: job.exitCode, reason: `Ray answered ${r.status}` };
    const info = JSON.parse(r.text) as { status: string; message?: string; driver_exit_code?: number | null };
    const status = RAY_STATUS[info.status] ?? 'running';
    const exitCode = info.driver_exit_code ?? null;
    if (job.status === 'cancelled' && status !== 'running')
      return { status: 'cancelled', exitCode, reason: 'cancelled' };
    if (status === 'cancelled') return { status, exitCode, reason: 'stopped in Ray (from outside Quarry?)' };
    if (status === 'failed') return { status, exitCode, reason: (info.message ?? 'failed').slice(0, 400) };
    return { status: job.status === 'cancelled' ? 'cancelled' : status, exitCode, reason: null };
  }

  async cancel(job: JobRecord, _dir: string, graceMs = 10_000): Promise<void> {
    const r = await this.call('POST', `/api/jobs/${encodeURIComponent(this.sid(job))}/stop`);
    if (r.status !== 200 && r.status !== 404) throw new Error(`Ray would not stop the job (${r.status}): ${r.text}`);
    const deadline = Date.now() + graceMs + 10_000;
    while (Date.now() < deadline) {
      const s = await this.call('GET', `/api/jobs/${encodeURIComponent(this.sid(job))}`);
      if (s.status !== 200 || (JSON.parse(s.text) as { status: string }).status !== 'RUNNING') return;
      await new Promise((res) => setTimeout(res, 200));
    }
  }

  async pull(job: JobRecord, dir: string): Promise<PullReport> {
    let logs: string;
    try {
      const r = await this.call('GET', `/api/jobs/${encodeURIComponent(this.sid(job))}/logs`);
      if (r.status !== 200) return { bytes: 0, checkpoints: null, error: `Ray answered ${r.status} for the logs` };
      logs = (JSON.parse(r.text) as { logs: string }).logs;
    } catch (err) {
      return { bytes: 0, checkpoints: null, error: (err as Error).message };
    }
    // The pull state as it is now, under the folder's lock: another pull of this job may have taken these lines.
    try {
      return underPullLock(dir, () => this.take(logs, dir));
    } catch (err) {
      return { bytes: 0, checkpoints: null, error: (err as Error).message };
    }
  }

  /** Writes what is new in the log (after the pull state's offset) into the job folder. */
  private take(logs: string, dir: string): PullReport {
    const state = readState(dir);
    // Whole lines only; a cut-off line is read again, whole, next time.
    const end = logs.lastIndexOf('\n') + 1;
    if (end <= state.logChars) return { bytes: 0, checkpoints: state.checkpoints, error: null };
    const fresh = logs.slice(state.logChars, end);
    let out = '';
    let metrics = '';
    for (const line of fresh.split('\n').slice(0, -1)) {
      if (line.startsWith(METRIC_MARK)) metrics += `${line.slice(METRIC_MARK.length)}\n`;
      else if (line.startsWith(CHECKPOINT_MARK)) state.checkpoints.push(line.slice(CHECKPOINT_MARK.length));
      else out += `${line}\n`;
    }
    mkdirSync(join(dir, 'out'), { recursive: true });
    if (out) appendFileSync(join(dir, 'stdout.log'), out);
    if (metrics) appendFileSync(join(dir, 'out', 'metrics.jsonl'), metrics);
    state.logChars = end;
    writeFileSync(join(dir, 'pull.json'), `${JSON.stringify(state)}\n`);
    return { bytes: Buffer.byteLength(out) + Buffer.byteLength(metrics), checkpoints: state.checkpoints, error: null };
  }

  async fetchCheckpoint(job: JobRecord, dir: string, name: string): Promise<string> {
    const local = join(dir, 'out', name);
    if (existsSync(local)) return local;
    throw new Error(
      `the Ray target does not copy checkpoint files: ${name} is on the cluster's node ` +
        `in ${job.remote.dir}/out/${name}`,
    );
  }
}

class RayUnreachable extends Error {}
