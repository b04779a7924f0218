// Reads trajectory JSONL files: every record is validated against the v1 schema, and errors name the line and field.
// A last line without its newline that is not valid JSON is what a killed writer leaves behind: it is reported in
// the result, not thrown, so everything written before the crash stays usable.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { TrajectoryRecord } from './types';
import { validateTrajectory } from './validate';
import { TrajectoryFormatError } from './errors';

export interface ReadOptions {
  /**
   * `throw` (default): the first bad line throws a TrajectoryFormatError.
   * `collect`: bad lines are skipped and listed in `invalid`, so a tool can report them all at once.
   */
  onInvalid?: 'throw' | 'collect';
}

export interface TruncatedTail {
  /** 1-based line number of the unfinished last line. */
  line: number;
  /** Characters it holds. */
  chars: number;
}

export interface ReadResult {
  records: TrajectoryRecord[];
  /** 1-based line of each record in `records` (same order); added for viewers that point at the file. */
  lines: number[];
  /** Bad lines, when reading with onInvalid: 'collect'. */
  invalid: TrajectoryFormatError[];
  /** The unfinished last line a killed writer left, or null. */
  truncated: TruncatedTail | null;
}

export interface LineRecord {
  line: number;
  record: TrajectoryRecord;
}

/** Parses and validates one line (1-based `line`); throws TrajectoryFormatError. */
export function parseTrajectoryLine(text: string, line: number, file: string | null = null): TrajectoryRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TrajectoryFormatError(file, line, null, `not valid JSON (${(err as Error).message})`);
  }
  const problem = validateTrajectory(value);
  if (problem) throw TrajectoryFormatError.fromProblem(problem, file, line);
  return value as TrajectoryRecord;
}

type Item =
  | { kind: 'record'; line: number; record: TrajectoryRecord }
  | { kind: 'invalid'; error: TrajectoryFormatError }
  | { kind: 'truncated'; tail: TruncatedTail };

/** Lines of text in, classified items out; `last` is the final line when it had no newline. */
function classify(text: string, line: number, file: string | null, last: boolean): Item | null {
  const body = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (body.trim() === '') return null;
  try {
    return { kind: 'record', line, record: parseTrajectoryLine(body, line, file) };
  } catch (err) {
    const e = err as TrajectoryFormatError;
    if (last && e.field === null) return { kind: 'truncated', tail: { line, chars: body.length } };
    return { kind: 'invalid', error: e };
  }
}

/** Thrown for a path that cannot be a trajectory file (a directory); `code` says which, like Node's own errors. */
export class TrajectoryPathError extends Error {
  constructor(
    readonly code: 'EISDIR',
    readonly path: string,
  ) {
    super(`${path} is a directory, not a trajectory file (JSONL): name a file inside it`);
    this.name = 'TrajectoryPathError';
  }
}

/**
 * The file's lines, classified. Linear in the file's size however long a line is: each chunk is searched once for
 * newlines and a line's pieces are joined once. A byte-order mark at the start is dropped.
 */
async function* items(path: string): AsyncGenerator<Item> {
  if ((await stat(path)).isDirectory()) throw new TrajectoryPathError('EISDIR', path);
  let pieces: string[] = [];
  let line = 0;
  let first = true;
  for await (const raw of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    let chunk = raw as string;
    if (first) {
      first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf('\n', start)) >= 0) {
      pieces.push(chunk.slice(start, nl));
      const text = pieces.length === 1 ? pieces[0] : pieces.join('');
      pieces = [];
      const item = classify(text, ++line, path, false);
      start = nl + 1;
      if (item) yield item;
    }
    if (start < chunk.length) pieces.push(chunk.slice(start));
  }
  const rest = pieces.join('');
  if (rest !== '') {
    const item = classify(rest, ++line, path, true);
    if (item) yield item;
  }
}

/**
 * Streams the records of a file one by one (large rollout files need not fit in memory). Bad lines throw; an
 * unfinished last line ends the stream quietly (use readTrajectories to learn about it).
 */
export async function* iterateTrajectories(path: string): AsyncGenerator<LineRecord> {
  for await (const item of items(path)) {
    if (item.kind === 'invalid') throw item.error;
    if (item.kind === 'record') yield { line: item.line, record: item.record };
  }
}

/** Reads a whole file. */
export async function readTrajectories(path: string, opts: ReadOptions = {}): Promise<ReadResult> {
  const out: ReadResult = { records: [], lines: [], invalid: [], truncated: null };
  for await (const item of items(path)) {
    if (item.kind === 'record') {
      out.records.push(item.record);
      out.lines.push(item.line);
    } else if (item.kind === 'truncated') out.truncated = item.tail;
    else if (opts.onInvalid === 'collect') out.invalid.push(item.error);
    else throw item.error;
  }
  return out;
}
