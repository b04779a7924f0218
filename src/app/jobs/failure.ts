// What failed, in one line: a failed job's stderr read for the Python exception that ended it (the last traceback's
// exception line, whatever came before it: chained exceptions, warnings, Ray's "(Actor pid=…)" prefixes), else its
// last line of output, for the job's reason and the notification that says it failed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface PythonException {
  /** The exception's class as Python prints it (`ValueError`, `torch.OutOfMemoryError`). */
  type: string;
  /** The message's first line ('' for an exception raised without one). */
  message: string;
}

/** The longest one-line summary kept. */
const SUMMARY_CHARS = 300;

/** A line without the prefixes Ray and torchrun put before each line a worker prints. */
function unprefixed(line: string): string {
  return line.replace(/^\((?:[\w.:-]+ )?pid=\d+(?:, ip=[\d.]+)?\)\s?/, '').replace(/^\[rank\d+\]:\s?/, '');
}

// An exception line: a dotted Python name, then nothing or ": message" (a name alone is a bare `raise X`).
const EXCEPTION_LINE = /^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?::\s?(.*))?$/;
// Lines of the frames: `  File "…", line N, in f`, the indented source line, and 3.11's `^^^^` markers.
const FRAME_LINE = /^\s/;

/**
 * The exception that ended a Python program, from the last "Traceback (most recent call last):" in `text`: the first
 * line after that traceback's frames. Chained exceptions print their tracebacks in order, so the last is the one that
 * was raised out. Null when there is no traceback.
 */
export function pythonException(text: string): PythonException | null {
  const lines = text.split(/\r?\n/).map(unprefixed);
  let start = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (/^Traceback \(most recent call last\):\s*$/.test(lines[i])) {
      start = i;
      break;
    }
  }
  if (start < 0) return null;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '' || FRAME_LINE.test(line)) continue;
    const m = EXCEPTION_LINE.exec(line.trimEnd());
    if (!m) return null;
    return { type: m[1], message: (m[2] ?? '').trim() };
  }
  return null;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS - 1)}…` : flat;
}

/** What failed, in one line: the Python exception (`Type: message`), else the last line of output, else ''. */
export function failureSummary(stderr: string, stdout = ''): string {
  for (const text of [stderr, stdout]) {
    const e = pythonException(text);
    if (e) return oneLine(e.message ? `${e.type}: ${e.message}` : e.type);
  }
  for (const text of [stderr, stdout]) {
    const last = text
      .split(/\r?\n/)
      .map((l) => unprefixed(l).trim())
      .filter(Boolean)
      .pop();
    if (last) return oneLine(last);
  }
  return '';
}

/** The last `bytes` of a job folder's log ('' when there is none): the end is where a failure is said. */
function logEnd(dir: string, name: string, bytes = 64 * 1024): string {
  try {
    const text = readFileSync(join(dir, name), 'utf8');
    return text.length > bytes ? text.slice(-bytes) : text;
  } catch {
    return '';
  }
}

/** The one-line summary of the failure of the job in `dir` (its stderr.log, else its stdout.log). */
export function jobFailureSummary(dir: string): string {
  return failureSummary(logEnd(dir, 'stderr.log'), logEnd(dir, 'stdout.log'));
}

/**
 * The notification for a job that failed or was lost, in one line: what failed (the logs' summary; for a lost job, or
 * without logs, the recorded reason's first line).
 */
export function failureNotice(job: { name: string; status: string; reason: string | null }, summary: string): string {
  const reason = oneLine((job.reason ?? '').split('\n')[0]);
  const why = job.status === 'failed' && summary ? summary : reason || summary;
  return `Quarry: job ${job.name} ${job.status}${why ? `: ${why}` : '.'}`;
}

/**
 * What the Quarry output channel keeps of a failed (or lost) job: the notice's line with the job's id and target, the
 * last lines of its log (stderr, else stdout) and where its logs are, so a failure can be read after the toast is gone.
 */
export function failureLogEntry(
  job: { id: string; name: string; target: string; status: string; reason: string | null },
  summary: string,
  tail: string,
  dir: string,
): string {
  const head = `job ${job.name} (${job.id}) on ${job.target} ${job.status}: ${
    summary || oneLine((job.reason ?? '').split('\n')[0]) || 'no reason given'
  }`;
  const shown = tail ? `\n  last lines of its log:\n${tail.replace(/^/gm, '    ')}` : '\n  (its logs are empty)';
  return `${head}${shown}\n  logs: ${dir}/stderr.log, ${dir}/stdout.log`;
}
