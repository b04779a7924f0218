// What a protocol module provides. A protocol is text handling only — prompts, stop strings, parsing, observation
// wrapping, the invalid-action message, final-answer extraction — so it is testable without a database or a model.
// The environment (env.ts) runs the SQL an action asks for and hands the result back to the protocol session.
import type { ChatMessage } from '../models/types';
import type { ExecResult } from '../db/types';
import type { SchemaInfo } from '../db/schema/types';
import type { SqlPool } from '../db/pool';
import type { EpisodeEnd, Observation, ParsedAction, ProtocolConfig, ProtocolName, Task } from './types';

/**
 * Progress-SQL's oracle feedback: given the SQL the model just wrote and the task (with its gold SQL), the
 * "Feedback: …" text for the next turn, or null when the query matches. The rewards issue supplies the real one (ODT).
 */
export type FeedbackSource = (predSql: string, task: Task) => string | null;

export interface ProtocolContext {
  task: Task;
  config: ProtocolConfig;
  /** The database's schema (introspected once per database); the protocol renders it in its own style. */
  schema: SchemaInfo;
  /** Required by `progress`; ignored by the others. */
  feedback?: FeedbackSource;
}

/** What the session says after the environment has carried out an action. */
export interface Response {
  observations: Observation[];
  done: boolean;
  end: EpisodeEnd | null;
  finalSql: string | null;
}

/** One episode's protocol state (MTSQL-R1 keeps its memory here; SQL-Trail its turn count). */
export interface ProtocolSession {
  /** The opening messages (system + user), quoting the paper's prompt. */
  start(): ChatMessage[];
  /** Stop strings to pass to the model for the next generation. */
  stop(): string[];
  /**
   * Restore what an OpenAI-compatible server strips: when generation ended on a stop string, the returned text lacks
   * it. Given the text and the stop string if the backend knows it, return the text as the model really wrote it.
   */
  restoreStop(text: string, stopString: string | null, finishReason: 'stop' | 'length' | 'abort' | 'error'): string;
  /** Parse one assistant turn. Never throws, whatever the text. */
  parse(text: string): ParsedAction;
  /**
   * The environment ran the action (exec is null when the action runs no SQL). `turnsLeft` counts turns after this
   * one. Returns the messages to append and whether the episode is over.
   */
  respond(action: ParsedAction, exec: ExecResult | null, turnsLeft: number): Response;
  /**
   * When the budget runs out without an answer: a message that asks for one last generation that must answer,
   * 'history' for one last generation from the history as it is with no added message (SQL-Trail Algorithm 1,
   * line 31), or null when the protocol simply ends.
   */
  finalCall(): Observation | 'history' | null;
}

/** What a protocol may use to complete a task before its episode starts. */
interface PrepareContext {
  pool: SqlPool;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface Protocol {
  readonly name: ProtocolName;
  /** Defaults for this protocol's config (maxTurns and its own switches). */
  readonly defaults: ProtocolConfig;
  /** True when an episode needs gold-SQL feedback (Progress-SQL's oracle): training and evaluation only, never Ask. */
  readonly needsOracle?: boolean;
  /**
   * Completes the task before the episode (MTSQL-R1 runs the earlier turns' SQL its memory quotes). Must not throw
   * for a task it cannot complete: it returns the task as it is, and the prompt then says what is missing.
   */
  prepareTask?(task: Task, ctx: PrepareContext): Promise<Task>;
  create(ctx: ProtocolContext): ProtocolSession;
}
