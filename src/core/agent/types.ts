// The contract between tasks, protocols, the environment and the loop. A protocol is pure text handling (prompts,
// parsing, observation wrapping); the environment owns the database side; the loop drives a ChatModel through it.
import type { ChatRole } from '../models/types';
import type { ExecResult } from '../db/types';
import type { Hardness } from '../sql/hardness';

/** The protocols, in the order lists show them: the one list every other list of names is derived from. */
export const PROTOCOL_NAMES = ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1', 'progress'] as const;
export type ProtocolName = (typeof PROTOCOL_NAMES)[number];

/** One question to answer against one database. */
export interface Task {
  /** Stable id within its dataset (e.g. `spider-train:17`, `cosql:dev:3:2`); free text for ad-hoc questions. */
  id?: string;
  question: string;
  /** Absolute path of the SQLite file. */
  dbPath: string;
  /** Dataset database id (Spider `db_id`), when there is one. */
  dbId?: string;
  /** BIRD-style external knowledge. */
  evidence?: string;
  /** Earlier turns of a conversation (SParC/CoSQL, or follow-ups in the editor), oldest first. */
  history?: {
    question: string;
    sql: string;
    /**
     * What running `sql` returned, as Python's `str(rows)` (`[('america', 4)]`), or its error text; MTSQL-R1's memory
     * shows it. Filled by whoever ran it (the editor after each turn; `withHistoryResults` in protocols/mtsqlr1).
     */
    result?: string;
  }[];
  /** Gold SQL, when known (benchmarks, training, Progress-SQL's oracle feedback). */
  gold?: string;
  /** Spider hardness of the gold query, when known; drives SQL-Trail's adaptive budget. */
  difficulty?: Hardness;
}

/** MTSQL-R1's MDP action labels (§3.1). Other protocols label their steps with the nearest one. */
export type MdpAction = 'PROPOSE' | 'EXECUTE' | 'E-VERIFY' | 'M-VERIFY' | 'SELF-CORRECT' | 'FINALIZE';

/**
 * What one assistant turn asked for.
 * - `execute`: run `sql` and show the result (skyrl/sqltrail `<sql>`, mtir `execute_sql_query`, mtsqlr1 `exec_sql`).
 * - `memory`: MTSQL-R1's `memory_retrieve` tool.
 * - `answer`: the final answer, `sql` holds it (`<solution>`, `<answer>`, `<answer_sql>`).
 * - `invalid`: nothing usable; `problems` says why and the protocol's invalid-action message is the observation.
 */
export type ActionKind = 'execute' | 'memory' | 'answer' | 'invalid';

export interface ParsedAction {
  kind: ActionKind;
  sql: string | null;
  /** The reasoning text (`<think>`, `<reasoning>`, text before a tool call), when the protocol has one. */
  thought: string | null;
  /** MDP labels of what happened in this turn, in order (a turn can verify and then self-correct). */
  mdp: MdpAction[];
  /** MTSQL-R1 verification verdicts given in this turn. */
  verify?: { exec?: 'pass' | 'no_pass'; memory?: string };
  /** Everything the parser had to tolerate or reject, in words (e.g. "2 <sql> blocks; the last one is used"). */
  problems: string[];
}

export interface ProtocolConfig {
  /** Turn budget T: the most assistant turns with an action. */
  maxTurns: number;
  /** Per-protocol switches (skyrl: `thinking`, `noSchema`; sqltrail: `adaptive`; …), recorded in trajectories. */
  [key: string]: unknown;
}

/** A message the environment gives back to the model, with the role the protocol puts it in. */
export interface Observation {
  role: ChatRole;
  content: string;
}

/** Everything the environment knows after one step. */
export interface StepResult {
  action: ParsedAction;
  /** The message(s) appended after the assistant turn; empty when the episode is done. */
  observations: Observation[];
  /** Result of the SQL the action ran, when it ran any. */
  exec: ExecResult | null;
  done: boolean;
  /** Why the episode ended, when done. */
  end: EpisodeEnd | null;
  /** The final SQL when done with an answer (or the protocol's fallback), else null. */
  finalSql: string | null;
  /** Turns the model still has. */
  turnsLeft: number;
}

export type EpisodeEnd = 'answer' | 'budget' | 'invalid' | 'error' | 'cancelled';
