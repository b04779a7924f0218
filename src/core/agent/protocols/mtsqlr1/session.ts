// One MTSQL-R1 episode: the opening prompt, the state that labels turns with MDP actions, the exec_sql and
// memory_retrieve return messages, and the end of the episode (an <answer_sql>, or the turn budget).
import type { ChatMessage } from '../../../models/types';
import type { ExecResult } from '../../../db/types';
import type { ProtocolContext, ProtocolSession, Response } from '../../protocol';
import type { Observation, ParsedAction } from '../../types';
import { configBool, configNumber, pythonErrorText, restoreTagStop, schemaText } from '../common';
import { normalizeSql } from '../../../sql/normalize';
import {
  CURRENT_HEADER,
  HISTORY_HEADER,
  MTSQLR1_INSTRUCTIONS,
  QUESTION_NOTE,
  execRecap,
  invalidActionMessage,
  memoryMessage,
  toolResponse,
  toolsSystemMessage,
} from './prompts';
import { asQuestion, memoryString, spiderSchemaOf } from './memory';
import { pyRows } from './pyRepr';
import { INITIAL_STATE, parseTurn, type TurnState } from './parse';

const TOOL_CALL_STOP = '</tool_call>';

/** What memory_retrieve shows as the proposed SQL's results when exec_sql never ran that SQL in this episode. */
export const NOT_EXECUTED = "(not executed yet: run it with the 'exec_sql' tool first)";

/** The prompt of App. D: instructions, earlier turns (the schema inside the first), then the current question. */
function mtsqlr1UserPrompt(ctx: ProtocolContext): string {
  const schema = schemaText(ctx.schema, ctx.config, 'ddl');
  const history = ctx.task.history ?? [];
  const parts = [MTSQLR1_INSTRUCTIONS, ''];
  if (history.length > 0) {
    parts.push(HISTORY_HEADER, '');
    history.forEach((h, i) => {
      const said = i === 0 ? `Database schema:\n${schema}\n${asQuestion(h.question)} ` : `${asQuestion(h.question)} `;
      parts.push(
        `## Turn ${i + 1} ##`,
        `User: "${said}"`,
        `Corresponding Correct SQL: "${String(h.sql ?? '').trim()}"`,
        '',
      );
    });
  } else {
    // The first question of a dialogue: no earlier turn to carry the schema, so it stands on its own.
    parts.push('Database schema:', schema, '');
  }
  parts.push(CURRENT_HEADER, `${asQuestion(ctx.task.question)} ${QUESTION_NOTE}`);
  return parts.join('\n');
}

function sqlKey(sql: string): string {
  try {
    return normalizeSql(sql);
  } catch {
    return sql.trim();
  }
}

export class Mtsqlr1Session implements ProtocolSession {
  private state: TurnState;
  /**
   * exec_sql's result message per SQL run in this episode, so memory_retrieve can show it (the env runs no SQL there).
   */
  private readonly results = new Map<string, string>();
  private memoryCache: string | null = null;
  private readonly currentQ: string;

  constructor(private readonly ctx: ProtocolContext) {
    this.state = { ...INITIAL_STATE, hasHistory: (ctx.task.history ?? []).length > 0 };
    this.currentQ = asQuestion(ctx.task.question);
  }

  start(): ChatMessage[] {
    return [
      { role: 'system', content: toolsSystemMessage() },
      { role: 'user', content: mtsqlr1UserPrompt(this.ctx) },
    ];
  }

  stop(): string[] {
    return configBool(this.ctx.config, 'stopAtToolCall', true) ? [TOOL_CALL_STOP] : [];
  }

  restoreStop(text: string, stopString: string | null, finishReason: 'stop' | 'length' | 'abort' | 'error'): string {
    return restoreTagStop(String(text ?? ''), stopString, finishReason, [TOOL_CALL_STOP]);
  }

  parse(text: string): ParsedAction {
    return parseTurn(text, this.state);
  }

  /** The memory string of this dialogue (built once). */
  memory(): string {
    this.memoryCache ??= memoryString(this.ctx.task.history ?? [], spiderSchemaOf(this.ctx.schema));
    return this.memoryCache;
  }

  respond(action: ParsedAction, exec: ExecResult | null, turnsLeft: number): Response {
    if (action.kind === 'answer' && action.sql !== null) {
      return { observations: [], done: true, end: 'answer', finalSql: action.sql };
    }
    let observation: Observation;
    if (action.kind === 'execute' && action.sql !== null) {
      const msg = this.execReturnMessage(exec);
      this.results.set(sqlKey(action.sql), msg);
      this.state = { ...this.state, phase: 'executed', candidate: action.sql, executedAny: true };
      observation = this.tool(execRecap(this.currentQ, action.sql, msg));
    } else if (action.kind === 'memory' && action.sql !== null) {
      const shown = this.results.get(sqlKey(action.sql)) ?? NOT_EXECUTED;
      this.state = { ...this.state, phase: 'memory', candidate: action.sql, memoryAny: true };
      observation = this.tool(memoryMessage(this.currentQ, action.sql, shown, this.memory()));
    } else {
      observation = { role: 'user', content: invalidActionMessage(action.problems) };
    }
    // verl's rollout stops after max_turns generations without running the last turn's tool call.
    if (turnsLeft <= 0) return { observations: [], done: true, end: 'budget', finalSql: this.fallbackSql() };
    return { observations: [observation], done: false, end: null, finalSql: null };
  }

  /** The paper ends an episode that runs out of turns without an answer; there is no extra final call. */
  finalCall(): Observation | null {
    return null;
  }

  /** "The sql results example is: [...]" cut to 200 characters, as App. D's tool responses show. */
  private execReturnMessage(exec: ExecResult | null): string {
    const chars = configNumber(this.ctx.config, 'resultChars', 200);
    if (exec === null) return '(the SQL was not run)';
    const text = exec.ok
      ? `The sql results example is: ${pyRows(exec)}`
      : `The sql execution failed: ${pythonErrorText(exec)}`;
    return text.slice(0, Math.max(0, chars));
  }

  private tool(body: string): Observation {
    return this.ctx.config.toolRole === 'tool'
      ? { role: 'tool', content: body }
      : { role: 'user', content: toolResponse(body) };
  }

  private fallbackSql(): string | null {
    return configBool(this.ctx.config, 'fallbackToLastSql', false) ? this.state.candidate : null;
  }
}
