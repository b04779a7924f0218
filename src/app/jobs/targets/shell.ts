// Runs a POSIX shell script on this machine or on a host over the system `ssh` (the user's OpenSSH config, keys,
// agent and known_hosts; BatchMode so nothing prompts; host keys always checked: StrictHostKeyChecking=yes, never
// turned off or auto-accepted). Each call is one connection, so a dropped connection fails only that call, which the
// caller retries on its next poll. Failures are sorted into what the user should do: an unknown or changed host key,
// refused authentication, an unreachable host, or the script's own failure.
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { SshEndpoint } from '../../../core/training/jobs/targets';
import { shellQuote } from '../../../core/training/overrides';

type ShellErrorKind = 'hostkey' | 'auth' | 'unreachable' | 'script';

export class ShellError extends Error {
  constructor(
    message: string,
    readonly kind: ShellErrorKind,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

interface ShellResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

interface RunOptions {
  /** Bytes (or a stream, e.g. tar's output) for the script's standard input. */
  stdin?: string | Buffer | Readable;
  timeoutMs?: number;
  /** Reject when the script exits non-zero (default true). */
  check?: boolean;
}

/**
 * ssh's options for an endpoint: the user's config applies; these only add what Quarry needs, and turn off what it
 * never needs (agent and X11 forwarding, LocalCommand), which on ssh's command line wins over any config file. The
 * endpoint's values were checked (targets.ts): none begins with "-"; the host goes after "--" (Shell.argv).
 */
export function sshOptions(e: SshEndpoint): string[] {
  const args = ['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', 'ConnectTimeout=15'];
  args.push('-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=3');
  args.push('-o', 'ForwardAgent=no', '-o', 'ForwardX11=no', '-o', 'PermitLocalCommand=no');
  if (e.sshConfig) args.push('-F', e.sshConfig);
  if (e.port) args.push('-p', String(e.port));
  if (e.user) args.push('-l', e.user);
  if (e.identityFile) args.push('-i', e.identityFile);
  return args;
}

function sshFailure(host: string, code: number, stderr: string): ShellError | null {
  if (code !== 255) return null;
  const said = stderr.replace(/\r/g, '').trim().split('\n').slice(-2).join(' / ');
  if (
    /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/i.test(stderr) ||
    /No (ED25519|RSA|ECDSA)? ?host key is known/i.test(stderr)
  )
    return new ShellError(
      `the host key of ${host} is not in your known_hosts or has changed (${said}): ` +
        `connect once with \`ssh ${host}\` ` +
        'in a terminal to check it; Quarry never accepts host keys itself',
      'hostkey',
      code,
      stderr,
    );
  if (/Permission denied|Too many authentication failures/i.test(stderr))
    return new ShellError(
      `ssh ${host} refused the login (${said}): check the user, the key (identityFile) or your ssh-agent`,
      'auth',
      code,
      stderr,
    );
  return new ShellError(`cannot reach ${host} over ssh: ${said || 'connection closed'}`, 'unreachable', code, stderr);
}

/** Where a script runs: on this machine (`endpoint` null) or on the host. */
export class Shell {
  constructor(readonly endpoint: SshEndpoint | null) {}

  get where(): string {
    return this.endpoint ? this.endpoint.host : 'this machine';
  }

  /** The argv that runs `script` there. */
  argv(script: string): string[] {
    if (!this.endpoint) return ['/bin/sh', '-c', script];
    // "--" before the host: whatever the host says, ssh never reads it as an option. A script needs no forwarding.
    const opts = [...sshOptions(this.endpoint), '-o', 'ClearAllForwardings=yes'];
    return ['ssh', ...opts, '--', this.endpoint.host, `sh -c ${shellQuote(script)}`];
  }

  run(script: string, opts: RunOptions = {}): Promise<ShellResult> {
    const [cmd, ...args] = this.argv(script);
    const timeoutMs = opts.timeoutMs ?? 120_000;
    return new Promise((resolve, reject) => {
      const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let err = '';
      let stdoutEnded = false;
      let exitCode: number | null | undefined;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => {
        err += b.toString('utf8');
      });
      // A ControlPersist master from the user's config can keep stderr open after ssh exits: finish on exit plus the
      // end of stdout, not on every pipe closing.
      const finish = () => {
        if (exitCode === undefined || !stdoutEnded) return;
        clearTimeout(timer);
        const code = exitCode ?? -1;
        if (timedOut) {
          reject(new ShellError(`no answer from ${this.where} in ${timeoutMs / 1000} s`, 'unreachable', null, err));
          return;
        }
        const ssh = this.endpoint ? sshFailure(this.endpoint.host, code, err) : null;
        if (ssh) return reject(ssh);
        if (code !== 0 && opts.check !== false) {
          const said = err.trim().split('\n').slice(-3).join(' / ') || `exit code ${code}`;
          return reject(new ShellError(`on ${this.where}: ${said}`, 'script', code, err));
        }
        resolve({ code, stdout: Buffer.concat(out), stderr: err });
      };
      child.stdout.on('end', () => {
        stdoutEnded = true;
        finish();
      });
      child.on('exit', (code, signal) => {
        exitCode = code ?? (signal ? 128 : -1);
        // stderr may still hold the last words; give it a moment.
        setTimeout(finish, 20);
      });
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new ShellError(`cannot run ${cmd}: ${e.message}`, 'unreachable', null, ''));
      });
      child.stdin.on('error', () => {
        /* the far side closed its input early; the exit code tells */
      });
      if (opts.stdin === undefined) child.stdin.end();
      else if (typeof opts.stdin === 'string' || Buffer.isBuffer(opts.stdin)) child.stdin.end(opts.stdin);
      else opts.stdin.pipe(child.stdin);
    });
  }
}
