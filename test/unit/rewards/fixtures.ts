// Trajectory records for reward tests, built as objects (the v1 record shape) so each test states exactly the turns
// it is about; and one shared database + sandbox pool + scoring resources.
import { createSqlPool } from '../../../src/core/db';
import type { ProtocolName, MdpAction, ActionKind } from '../../../src/core/agent/types';
import {
  TRAJECTORY_SCHEMA,
  type TrajectoryRecord,
  type TrajectoryTurn,
  type TurnExec,
} from '../../../src/core/trajectories/types';
import type { Hardness } from '../../../src/core/sql/hardness';
import { createScoringResources } from '../../../src/core/rewards';
import { buildDb } from '../../helpers/fixtures';

export const schoolDb = buildDb('rewards-school');

export function newPool() {
  return createSqlPool({ size: 2 });
}

export function newResources(pool: ReturnType<typeof createSqlPool>) {
  return createScoringResources({ run: pool, timeoutMs: 5000 });
}

export interface TurnSpec {
  assistant: string;
  kind?: ActionKind;
  sql?: string | null;
  mdp?: MdpAction[];
  verify?: { exec?: 'pass' | 'no_pass'; memory?: string };
  exec?: Partial<TurnExec> | null;
}

function turn(spec: TurnSpec, index: number): TrajectoryTurn {
  const exec: TurnExec | null =
    spec.exec === undefined || spec.exec === null
      ? null
      : {
          ok: true,
          errorClass: null,
          error: null,
          columns: [],
          rowCount: 1,
          truncated: false,
          ms: 1,
          ...spec.exec,
        };
  return {
    index,
    assistant: spec.assistant,
    action: {
      kind: spec.kind ?? 'execute',
      sql: spec.sql ?? null,
      thought: null,
      mdp: spec.mdp ?? [],
      verify: spec.verify,
      problems: [],
    },
    observations: [],
    exec,
    finishReason: 'stop',
    usage: { promptTokens: 0, completionTokens: 0 },
    timings: { modelMs: 0, envMs: 0 },
  };
}

interface TrajectorySpec {
  id?: string;
  groupId?: string;
  protocol?: ProtocolName;
  turns: TurnSpec[];
  finalSql: string | null;
  end?: TrajectoryRecord['end'];
  gold?: string;
  dbPath?: string;
  difficulty?: Hardness | null;
  maxTurns?: number;
  config?: Record<string, unknown>;
}

export function trajectory(spec: TrajectorySpec): TrajectoryRecord {
  const id = spec.id ?? 't1';
  return {
    schema: TRAJECTORY_SCHEMA,
    id,
    groupId: spec.groupId ?? id,
    sample: 0,
    createdAt: '2026-01-01T00:00:00.000Z',
    task: {
      id: 'q1',
      question: 'q?',
      db: { path: spec.dbPath ?? schoolDb, id: 'school', sha256: '0'.repeat(64) },
      evidence: null,
      history: [],
      gold: spec.gold ?? null,
      difficulty: spec.difficulty ?? null,
    },
    protocol: { name: spec.protocol ?? 'skyrl', config: { maxTurns: spec.maxTurns ?? 5, ...(spec.config ?? {}) } },
    model: { spec: 'test', sampling: {} },
    prompt: [],
    turns: spec.turns.map(turn),
    finalSql: spec.finalSql,
    end: spec.end ?? 'answer',
    error: null,
    usage: { promptTokens: 0, completionTokens: 0 },
    timings: { totalMs: 0, modelMs: 0, envMs: 0 },
    meta: {},
  };
}

/** A well-formed SkyRL-SQL episode: exploratory <sql> turns, then a <solution>. */
export function skyrlEpisode(
  explore: string[],
  solution: string,
  extra: Partial<TrajectorySpec> = {},
): TrajectoryRecord {
  const turns: TurnSpec[] = explore.map((sql) => ({
    assistant: `<think>look</think>\n<sql>${sql}</sql>`,
    sql,
    mdp: ['PROPOSE', 'EXECUTE'],
    exec: {},
  }));
  turns.push({
    assistant: `<think>done</think>\n<solution>${solution}</solution>`,
    kind: 'answer',
    sql: solution,
    mdp: ['FINALIZE'],
  });
  return trajectory({ protocol: 'skyrl', turns, finalSql: solution, ...extra });
}
