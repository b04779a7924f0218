// Shared by the mtsqlr1 tests: the App. D databases (built from SQL at test time), sessions over them, the quoted
// App. D turns and their expected parses, and result builders.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { introspectSchema } from '../../../../src/core/db/schema/introspect';
import type { SchemaInfo } from '../../../../src/core/db/schema/types';
import type { ExecResult } from '../../../../src/core/db/types';
import type { ProtocolConfig, Task } from '../../../../src/core/agent/types';
import { mtsqlr1Protocol, type Mtsqlr1Session, type TurnState } from '../../../../src/core/agent/protocols/mtsqlr1';
import { buildDb, fixturesDir } from '../../../helpers/fixtures';

export const outputs = join(fixturesDir, 'model-outputs', 'mtsqlr1');

export function turnText(name: string): string {
  return readFileSync(join(outputs, name), 'utf8');
}

const dbs = new Map<string, { path: string; schema: SchemaInfo }>();

/** car-makers (App. D.1) or world-country (App. D.2), built once per process. */
export function db(name: 'car-makers' | 'world-country'): { path: string; schema: SchemaInfo } {
  let hit = dbs.get(name);
  if (!hit) {
    const path = buildDb(name, { sql: readFileSync(join(outputs, `${name}.sql`), 'utf8') });
    hit = { path, schema: introspectSchema(path) };
    dbs.set(name, hit);
  }
  return hit;
}

/** App. D.1's dialogue: turn 1 (with the gold SQL of the trace) and the follow-up question. */
export const D1_GOLD =
  'SELECT T1.Continent , count ( * ) FROM CONTINENTS AS T1 JOIN COUNTRIES AS T2 ON T1.ContId = ' +
  'T2.continent JOIN car_makers AS T3 ON T2.CountryId = T3.Country GROUP BY T1.Continent';
export function d1Task(over: Partial<Task> = {}): Task {
  return {
    question: 'What about the number of car makers in the country USA?',
    dbPath: db('car-makers').path,
    history: [{ question: 'Can you list the number of car makers on each continent?', sql: D1_GOLD }],
    ...over,
  };
}

export function d1Session(task: Task = d1Task(), config: Partial<ProtocolConfig> = {}): Mtsqlr1Session {
  return mtsqlr1Protocol.create({
    task,
    config: { ...mtsqlr1Protocol.defaults, ...config } as ProtocolConfig,
    schema: db('car-makers').schema,
  }) as Mtsqlr1Session;
}

export function okResult(columns: string[], rows: (string | number | null)[][]): ExecResult {
  return { ok: true, errorClass: null, error: null, columns, rows, rowCount: rows.length, truncated: false, ms: 1 };
}

export function errResult(error: string): ExecResult {
  return { ok: false, errorClass: 'sql', error, columns: [], rows: [], rowCount: 0, truncated: false, ms: 1 };
}

interface ExpectedCase {
  file: string;
  state: Omit<TurnState, 'hasHistory'>;
  kind: string;
  tool?: string;
  sql: string | null;
  mdp: string[];
  /** Each entry must occur in the problem at the same position; the counts must match. */
  problems: string[];
}

/** expected.json with the `$name` SQL references resolved. */
export function expectedCases(): ExpectedCase[] {
  const raw = JSON.parse(turnText('expected.json')) as { sql: Record<string, string>; cases: ExpectedCase[] };
  const resolve = (v: string | null) => (v?.startsWith('$') ? raw.sql[v.slice(1)] : v);
  return raw.cases.map((c) => ({
    ...c,
    sql: resolve(c.sql),
    state: { ...c.state, candidate: resolve(c.state.candidate) },
  }));
}

/** A tool call as the App. D model writes it. */
export function call(name: string, code: string, before = '<think>\nreasoning\n</think>\n\n'): string {
  return `${before}<tool_call>\n${JSON.stringify({ name, arguments: { code } })}\n</tool_call>`;
}
