// Shared by the protocol tests: a real schema (introspected from a fixture database), sessions, result builders
// and the splitter that cuts a quoted multi-turn trace into its assistant turns.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { introspectSchema } from '../../../../src/core/db/schema/introspect';
import type { SchemaInfo } from '../../../../src/core/db/schema/types';
import type { ExecResult } from '../../../../src/core/db/types';
import type { FeedbackSource, Protocol, ProtocolSession } from '../../../../src/core/agent/protocol';
import type { ProtocolConfig, Task } from '../../../../src/core/agent/types';
import { buildDb, fixturesDir } from '../../../helpers/fixtures';

let concert: { path: string; schema: SchemaInfo } | null = null;

/** The Spider concert_singer fixture, built once per test process. */
export function concertDb(): { path: string; schema: SchemaInfo } {
  if (!concert) {
    const path = buildDb('spider-concert');
    concert = { path, schema: introspectSchema(path) };
  }
  return concert;
}

export function task(over: Partial<Task> = {}): Task {
  return { question: 'How many singers do we have?', dbPath: concertDb().path, dbId: 'concert_singer', ...over };
}

export function session(
  p: Protocol,
  config: Partial<ProtocolConfig> = {},
  t: Partial<Task> = {},
  feedback?: FeedbackSource,
): ProtocolSession {
  return p.create({
    task: task(t),
    config: { ...p.defaults, ...config } as ProtocolConfig,
    schema: concertDb().schema,
    feedback,
  });
}

export function okResult(columns: string[], rows: (string | number | null)[][]): ExecResult {
  return { ok: true, errorClass: null, error: null, columns, rows, rowCount: rows.length, truncated: false, ms: 1 };
}

export function errResult(error: string, errorClass: ExecResult['errorClass'] = 'sql'): ExecResult {
  return { ok: false, errorClass, error, columns: [], rows: [], rowCount: 0, truncated: false, ms: 1 };
}

const outputsDir = join(fixturesDir, 'model-outputs');

export function fixture(protocol: string, name: string): string {
  return readFileSync(join(outputsDir, protocol, name), 'utf8');
}

export function fixtureNames(protocol: string): string[] {
  return readdirSync(join(outputsDir, protocol))
    .filter((f) => f.endsWith('.txt'))
    .sort();
}

/**
 * The assistant turns of a quoted trace: the text between environment messages. `envOpen` starts an environment
 * message, which ends at `envClose` (or, for traces damaged in the paper's PDF, at a bare "observation>").
 */
export function splitTurns(trace: string, envOpen: string, envClose: RegExp): string[] {
  const turns: string[] = [];
  let rest = trace;
  for (;;) {
    const at = rest.indexOf(envOpen);
    if (at < 0) break;
    turns.push(rest.slice(0, at));
    const after = rest.slice(at + envOpen.length);
    const close = envClose.exec(after);
    rest = close ? after.slice(close.index + close[0].length) : '';
  }
  if (rest.trim() !== '') turns.push(rest);
  return turns.map((t) => t.replace(/^\s+/, ''));
}
