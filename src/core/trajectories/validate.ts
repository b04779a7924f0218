// Checks that a parsed JSON value is a v1 trajectory record, field by field, and names the first field path that is
// wrong (`turns[2].exec.rowCount`). Hand-written so the reader needs no schema library. Unknown extra fields are
// allowed: additive fields keep the schema version.
import { TRAJECTORY_SCHEMA } from './types';
import { PROTOCOL_NAMES } from '../agent/types';

export interface TrajectoryProblem {
  /** Path of the offending field, e.g. `turns[2].exec.rowCount` (`` for the record itself). */
  field: string;
  message: string;
}

const PROTOCOLS: string[] = [...PROTOCOL_NAMES];
const ROLES = ['system', 'user', 'assistant', 'tool'];
const KINDS = ['execute', 'memory', 'answer', 'invalid'];
const MDP = ['PROPOSE', 'EXECUTE', 'E-VERIFY', 'M-VERIFY', 'SELF-CORRECT', 'FINALIZE'];
const ENDS = ['answer', 'budget', 'invalid', 'error', 'cancelled'];
const FINISH = ['stop', 'length', 'abort', 'error'];
const ERROR_CLASSES = ['sql', 'rejected', 'timeout', 'resource'];
const HARDNESS = ['easy', 'medium', 'hard', 'extra'];

type Obj = Record<string, unknown>;

/** Thrown at the first problem; the validator catches it and reports it. */
class Stop extends Error {
  constructor(readonly problem: TrajectoryProblem) {
    super(problem.message);
  }
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing (the field is missing)';
  const s = JSON.stringify(v);
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}

function fail(field: string, expected: string, got: unknown): never {
  throw new Stop({ field, message: `expected ${expected}, got ${show(got)}` });
}

function at(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
}

function obj(v: unknown, path: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'an object', v);
  return v as Obj;
}
function str(v: unknown, path: string, nonEmpty = false): string {
  if (typeof v !== 'string' || (nonEmpty && v === '')) fail(path, nonEmpty ? 'a non-empty string' : 'a string', v);
  return v;
}
function strOrNull(v: unknown, path: string): void {
  if (v !== null && typeof v !== 'string') fail(path, 'a string or null', v);
}
function bool(v: unknown, path: string): void {
  if (typeof v !== 'boolean') fail(path, 'true or false', v);
}
function count(v: unknown, path: string): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(path, 'a non-negative integer', v);
}
function positiveInt(v: unknown, path: string): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) fail(path, 'a positive integer', v);
}
function ms(v: unknown, path: string): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(path, 'a non-negative number of milliseconds', v);
}
function oneOf(v: unknown, values: string[], path: string, orNull = false): void {
  if (orNull && v === null) return;
  if (typeof v !== 'string' || !values.includes(v))
    fail(path, `one of ${values.join(', ')}${orNull ? ' or null' : ''}`, v);
}
function arr(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) fail(path, 'an array', v);
  return v;
}
function strings(v: unknown, path: string): void {
  arr(v, path).forEach((x, i) => str(x, at(path, i)));
}

function message(v: unknown, path: string): void {
  const m = obj(v, path);
  oneOf(m.role, ROLES, at(path, 'role'));
  str(m.content, at(path, 'content'));
}

function usage(v: unknown, path: string): void {
  const u = obj(v, path);
  count(u.promptTokens, at(path, 'promptTokens'));
  count(u.completionTokens, at(path, 'completionTokens'));
}

function task(v: unknown, path: string): void {
  const t = obj(v, path);
  strOrNull(t.id, at(path, 'id'));
  str(t.question, at(path, 'question'));
  const db = obj(t.db, at(path, 'db'));
  str(db.path, at(at(path, 'db'), 'path'), true);
  strOrNull(db.id, at(at(path, 'db'), 'id'));
  if (typeof db.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(db.sha256))
    fail(at(at(path, 'db'), 'sha256'), '64 lowercase hex digits', db.sha256);
  strOrNull(t.evidence, at(path, 'evidence'));
  arr(t.history, at(path, 'history')).forEach((h, i) => {
    const p = at(at(path, 'history'), i);
    const o = obj(h, p);
    str(o.question, at(p, 'question'));
    str(o.sql, at(p, 'sql'));
    if (o.result !== undefined) str(o.result, at(p, 'result'));
  });
  strOrNull(t.gold, at(path, 'gold'));
  oneOf(t.difficulty, HARDNESS, at(path, 'difficulty'), true);
}

function sampling(v: unknown, path: string): void {
  const s = obj(v, path);
  if (s.temperature !== undefined && (typeof s.temperature !== 'number' || s.temperature < 0))
    fail(at(path, 'temperature'), 'a non-negative number', s.temperature);
  if (s.topP !== undefined && (typeof s.topP !== 'number' || s.topP <= 0 || s.topP > 1))
    fail(at(path, 'topP'), 'a number in (0, 1]', s.topP);
  if (s.maxTokens !== undefined) positiveInt(s.maxTokens, at(path, 'maxTokens'));
  if (s.stop !== undefined) strings(s.stop, at(path, 'stop'));
  if (s.seed !== undefined && (typeof s.seed !== 'number' || !Number.isInteger(s.seed)))
    fail(at(path, 'seed'), 'an integer', s.seed);
}

function action(v: unknown, path: string): void {
  const a = obj(v, path);
  oneOf(a.kind, KINDS, at(path, 'kind'));
  strOrNull(a.sql, at(path, 'sql'));
  strOrNull(a.thought, at(path, 'thought'));
  arr(a.mdp, at(path, 'mdp')).forEach((m, i) => oneOf(m, MDP, at(at(path, 'mdp'), i)));
  if (a.verify !== undefined) {
    const p = at(path, 'verify');
    const ver = obj(a.verify, p);
    if (ver.exec !== undefined) oneOf(ver.exec, ['pass', 'no_pass'], at(p, 'exec'));
    if (ver.memory !== undefined) str(ver.memory, at(p, 'memory'));
  }
  strings(a.problems, at(path, 'problems'));
  if ((a.kind === 'execute' || a.kind === 'answer') && a.sql === null)
    fail(at(path, 'sql'), `the SQL of a '${String(a.kind)}' action`, a.sql);
}

function exec(v: unknown, path: string): void {
  if (v === null) return;
  const e = obj(v, path);
  bool(e.ok, at(path, 'ok'));
  oneOf(e.errorClass, ERROR_CLASSES, at(path, 'errorClass'), true);
  strOrNull(e.error, at(path, 'error'));
  strings(e.columns, at(path, 'columns'));
  count(e.rowCount, at(path, 'rowCount'));
  bool(e.truncated, at(path, 'truncated'));
  ms(e.ms, at(path, 'ms'));
  if (e.ok === false && e.errorClass === null)
    fail(at(path, 'errorClass'), 'an error class when ok is false', e.errorClass);
}

function turn(v: unknown, path: string, index: number): void {
  const t = obj(v, path);
  if (t.index !== index) fail(at(path, 'index'), `${index} (turns are numbered from 0 in order)`, t.index);
  str(t.assistant, at(path, 'assistant'));
  action(t.action, at(path, 'action'));
  arr(t.observations, at(path, 'observations')).forEach((o, i) => message(o, at(at(path, 'observations'), i)));
  exec(t.exec, at(path, 'exec'));
  oneOf(t.finishReason, FINISH, at(path, 'finishReason'));
  usage(t.usage, at(path, 'usage'));
  if (t.usageEstimated !== undefined) bool(t.usageEstimated, at(path, 'usageEstimated'));
  if (t.overLong !== undefined) bool(t.overLong, at(path, 'overLong'));
  const tm = obj(t.timings, at(path, 'timings'));
  ms(tm.modelMs, at(at(path, 'timings'), 'modelMs'));
  ms(tm.envMs, at(at(path, 'timings'), 'envMs'));
}

function record(v: unknown): void {
  const r = obj(v, '');
  if (r.schema !== TRAJECTORY_SCHEMA) {
    fail(
      'schema',
      `"${TRAJECTORY_SCHEMA}"` +
        (typeof r.schema === 'string' && r.schema.startsWith('quarry.trajectory/')
          ? ' (this reader does not know that version)'
          : ''),
      r.schema,
    );
  }
  str(r.id, 'id', true);
  str(r.groupId, 'groupId', true);
  count(r.sample, 'sample');
  if (typeof r.createdAt !== 'string' || Number.isNaN(Date.parse(r.createdAt)))
    fail('createdAt', 'an ISO-8601 time', r.createdAt);
  task(r.task, 'task');
  const p = obj(r.protocol, 'protocol');
  oneOf(p.name, PROTOCOLS, 'protocol.name');
  const cfg = obj(p.config, 'protocol.config');
  positiveInt(cfg.maxTurns, 'protocol.config.maxTurns');
  if (p.budget !== undefined) positiveInt(p.budget, 'protocol.budget');
  const m = obj(r.model, 'model');
  str(m.spec, 'model.spec', true);
  sampling(m.sampling, 'model.sampling');
  arr(r.prompt, 'prompt').forEach((x, i) => message(x, at('prompt', i)));
  arr(r.turns, 'turns').forEach((x, i) => turn(x, at('turns', i), i));
  strOrNull(r.finalSql, 'finalSql');
  oneOf(r.end, ENDS, 'end');
  strOrNull(r.error, 'error');
  if (r.end === 'error' && typeof r.error !== 'string')
    fail('error', "the failure in words when end is 'error'", r.error);
  usage(r.usage, 'usage');
  const tm = obj(r.timings, 'timings');
  ms(tm.totalMs, 'timings.totalMs');
  ms(tm.modelMs, 'timings.modelMs');
  ms(tm.envMs, 'timings.envMs');
  obj(r.meta, 'meta');
}

/** The first problem that stops `value` from being a v1 trajectory record, or null when it is one. */
export function validateTrajectory(value: unknown): TrajectoryProblem | null {
  try {
    record(value);
    return null;
  } catch (err) {
    if (err instanceof Stop) return err.problem;
    throw err;
  }
}
