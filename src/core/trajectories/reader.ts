// Reads trajectory JSONL files: every record is validated against the v1 schema, and errors name the line and field.
// A last line without its newline that is not valid JSON is what a killed writer leaves behind: it is reported in
// the result, not thrown, so everything written before the crash stays usable.
import { createReadStream } from 'node:fs';
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

type Item = { kind: 'record'; line: number; record: TrajectoryRecord } | { kind: 'invalid'; error: TrajectoryFormatError } | { kind: 'truncated'; tail: TruncatedTail };

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

async function* items(path: string): AsyncGenerator<Item> {
  let rest = '';
  let line = 0;
  for await (const chunk of createReadStream(path, { encoding: 'utf8' })) {
    rest += chunk as string;
    let start = 0;
    let nl: number;
    while ((nl = rest.indexOf('\n', start)) >= 0) {
      const item = classify(rest.slice(start, nl), ++line, path, false);
      start = nl + 1;
      if (item) yield item;
    }
    rest = rest.slice(start);
  }
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
    if (item.kind === 'record') { out.records.push(item.record); out.lines.push(item.line); }
    else if (item.kind === 'truncated') out.truncated = item.tail;
    else if (opts.onInvalid === 'collect') out.invalid.push(item.error);
    else throw item.error;
  }
  return out;
}
