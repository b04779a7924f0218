// The trajectory record: one JSON object per line, written by the agent loop (editor, `quarry ask`, `quarry bench`,
// RL rollouts) and read by replay, labeling, rewards and training. Additive fields keep the version; a change that
// breaks readers bumps TRAJECTORY_SCHEMA. docs/trajectory-format.md describes every field.
import type { ChatMessage, SamplingOptions, TokenUsage, FinishReason } from '../models/types';
import type { ActionKind, EpisodeEnd, MdpAction, Observation, ProtocolName } from '../agent/types';
import type { ErrorClass } from '../db/types';
import type { Hardness } from '../sql/hardness';

export const TRAJECTORY_SCHEMA = 'quarry.trajectory/1';

interface TrajectoryTask {
  id: string | null;
  question: string;
  db: {
    /** Path as given (absolute when recorded by the loop). */
    path: string;
    /** Dataset database id, when there is one. */
    id: string | null;
    /** sha256 of the database file's bytes, hex: a replay can tell whether the database changed. */
    sha256: string;
  };
  evidence: string | null;
  /** `result` (what running `sql` returned, as MTSQL-R1's memory shows it) was added within v1 and is optional. */
  history: { question: string; sql: string; result?: string }[];
  gold: string | null;
  difficulty: Hardness | null;
}

export interface TurnExec {
  ok: boolean;
  errorClass: ErrorClass | null;
  error: string | null;
  columns: string[];
  rowCount: number;
  truncated: boolean;
  ms: number;
}

export interface TrajectoryTurn {
  /** 0-based. */
  index: number;
  /**
   * The assistant's raw text for this turn, exactly as generated (the stop string restored when the backend cut it).
   */
  assistant: string;
  action: {
    kind: ActionKind;
    sql: string | null;
    thought: string | null;
    mdp: MdpAction[];
    verify?: { exec?: 'pass' | 'no_pass'; memory?: string };
    problems: string[];
  };
  /** Messages the environment appended after this turn (empty for the last turn of an answered episode). */
  observations: Observation[];
  exec: TurnExec | null;
  finishReason: FinishReason;
  usage: TokenUsage;
  /** Present (true) when the backend reported no token counts and `usage` is its estimate; added within v1. */
  usageEstimated?: boolean;
  /** Present (true) when the response passed the model backend's size cap and was cut there; added within v1. */
  overLong?: boolean;
  timings: { modelMs: number; envMs: number };
}

export interface TrajectoryRecord {
  schema: typeof TRAJECTORY_SCHEMA;
  /** Unique id of this trajectory. */
  id: string;
  /** Shared by the G samples of one question (GRPO group, majority vote); equals `id` when alone. */
  groupId: string;
  /** 0-based sample index within the group. */
  sample: number;
  /** ISO-8601 time the episode started. */
  createdAt: string;
  task: TrajectoryTask;
  protocol: {
    name: ProtocolName;
    config: Record<string, unknown>;
    /** Turns the episode was allowed (config.maxTurns, or SQL-Trail's adaptive budget); added within v1. */
    budget?: number;
  };
  model: { spec: string; sampling: SamplingOptions };
  /** The opening messages reset() produced (system + user), so the whole chat can be rebuilt exactly. */
  prompt: ChatMessage[];
  turns: TrajectoryTurn[];
  finalSql: string | null;
  end: EpisodeEnd;
  /** Set when end is 'error' (model or environment failure), in words. */
  error: string | null;
  usage: TokenUsage;
  timings: { totalMs: number; modelMs: number; envMs: number };
  /** Free-form tags a producer adds (dataset name, dataset index, run id…). */
  meta: Record<string, unknown>;
}
