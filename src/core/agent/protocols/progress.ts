// Progress-SQL (2025): a training/evaluation refinement protocol. Each turn the model answers with <think> and one
// <sql>; the environment runs it and, unless it matches the gold result, replies with the oracle's structural
// diagnostics in App. F's "Feedback: your previous SQL has structural issues: …" message (Algorithm 1, App. C).
// The rollout stops at the first matching SQL or after T = 4 turns; the final SQL is the last one written.
// `feedback: 'none'` is the paper's evaluation protocol instead (§5 Implementation Details, App. B "Evaluation
// Setup"): "standard single-turn inference without ODT feedback" — one answer to App. F's Round 1 prompt is final,
// and the session reads neither the gold SQL nor a feedback source, so nothing computed from the gold can reach the
// model.
import type { ExecResult } from '../../db/types';
import type { Protocol, ProtocolContext, ProtocolSession, Response } from '../protocol';
import type { ChatMessage } from '../../models/types';
import type { Observation, ParsedAction, ProtocolConfig } from '../types';
import { MdpTracker, LONG_RESPONSE_CHARS, invalid, restoreTagStop, schemaText, earlierInConversation } from './common';
import { findBlocks, removeBlocks, stripCodeFence, excerpt } from './tags';

const PROGRESS_DEFAULTS: ProtocolConfig = {
  // App. B / Table 4: "Max Interaction Turns T 4".
  maxTurns: 4,
  // App. F: "{db_details} contains the DDL schema of the target database": the DDL alone, no example rows (SkyRL-SQL's
  // OmniSQL prompt has them; this one does not say so). `sampleRows` in the protocol config adds them back.
  schemaStyle: 'ddl',
  sampleRows: 0,
  // 'oracle': Algorithm 1's multi-turn rollout with ODT feedback (training); 'none': single-turn evaluation.
  feedback: 'oracle',
};

/** The config of Progress-SQL's evaluation protocol: App. F's prompt, one turn, no ODT feedback. */
export const PROGRESS_EVAL_CONFIG: Readonly<ProtocolConfig> = Object.freeze({ maxTurns: 1, feedback: 'none' });

export const PROGRESS_REQUIRES =
  'progress protocol needs gold SQL and an oracle feedback source; it is for training and evaluation ' +
  "(the paper's evaluation protocol, without either, is config feedback: 'none')";

/** App. F, system prompt ({db_engine} is SQLite). */
export const PROGRESS_SYSTEM_PROMPT = [
  'Task Overview:',
  'You are a data science expert. The user message contains the database schema and the natural language ' +
    'question. Your task is to understand the schema and generate a valid SQL query to answer the question.',
  'Database Engine:',
  'SQLite',
  'Instructions:',
  'Dialect Strictness: Ensure the generated SQL strictly conforms to the specific syntax and functions of ' +
    'the provided SQLite.',
  'Precision: Only output the exact information asked in the question. Do not include extra columns in ' +
    'the SELECT clause.',
  'Ambiguity Prevention: Always use short table aliases (e.g., t1, t2) and explicitly qualify all column ' +
    'names with their respective table aliases, especially when JOINs are involved.',
  'Robustness: Consider edge cases such as handling NULL values appropriately and string matching case ' +
    'conventions where applicable.',
  'Thinking Process: Before generating the final SQL query, step-by-step analyze the tables needed, the ' +
    'JOIN conditions, and the filtering criteria. Enclose your reasoning strictly within <think> and ' +
    '</think> tags.',
  'Output Format:',
  'Please strictly follow this exact output structure. Do not output any other text or markdown outside of these tags:',
  '<think> Your step-by-step reasoning here. </think> <sql> SELECT ... </sql>',
].join('\n');

// App. F, Round 2+, after the diagnostics.
const REVISE =
  'Revise your previous answer using these issues. Revise your previous answer for SQLite. Put ' +
  'step-by-step reasoning inside <think>...</think>, then output exactly one corrected SQLite query inside ' +
  '<sql>...</sql>. Do not output any text outside those tags.';

/**
 * The format sentence of the Round 2+ prompt, sent back when a turn has no usable <sql> (the paper has no such case).
 */
export const PROGRESS_INVALID_MESSAGE =
  'Put step-by-step reasoning inside <think>...</think>, then output exactly one corrected SQLite query ' +
  'inside <sql>...</sql>. Do not output any text outside those tags.';

/**
 * App. F's Round 2+ message around verbalised diagnostics: "Feedback: your previous SQL has structural issues:
 * {error_codes}, {error_descriptions} . Revise …". For feedback sources that build the message from ODT tags.
 */
export function formatProgressFeedback(errorCodes: string[], errorDescriptions: string[]): string {
  return (
    `Feedback: your previous SQL has structural ` +
    `issues: ${errorCodes.join(', ')}, ${errorDescriptions.join(' ')} . ${REVISE}`
  );
}

/**
 * The message for one feedback text: a complete "Feedback: …" message is used as given; anything else is taken as
 * the "{error_codes}, {error_descriptions}" part and put into the template.
 */
export function progressFeedbackMessage(feedback: string): string {
  const text = feedback.trim();
  if (/^Feedback:/.test(text)) return text;
  return `Feedback: your previous SQL has structural issues: ${text} . ${REVISE}`;
}

/** App. F, Round 1 user prompt (the apostrophe in "database’s" is the paper's). */
function progressUserPrompt(ctx: ProtocolContext): string {
  const extra = [ctx.task.evidence?.trim(), earlierInConversation(ctx.task.history)].filter((s): s is string => !!s);
  return [
    'Database Schema:',
    schemaText(ctx.schema, ctx.config, 'ddl'),
    'This schema describes the database’s structure, including tables, columns, primary keys, foreign ' +
      'keys, and any relevant relationships or constraints.',
    'Question:',
    [...extra, ctx.task.question].join('\n'),
  ].join('\n');
}

class ProgressSession implements ProtocolSession {
  protected readonly mdp = new MdpTracker();

  constructor(protected readonly ctx: ProtocolContext) {}

  start(): ChatMessage[] {
    return [
      { role: 'system', content: PROGRESS_SYSTEM_PROMPT },
      { role: 'user', content: progressUserPrompt(this.ctx) },
    ];
  }

  stop(): string[] {
    // Each turn is one complete "<think> … </think> <sql> … </sql>" answer; the paper uses no stop strings.
    return [];
  }

  restoreStop(text: string, stopString: string | null, finishReason: 'stop' | 'length' | 'abort' | 'error'): string {
    return restoreTagStop(String(text ?? ''), stopString, finishReason, ['</sql>']);
  }

  parse(text: string): ParsedAction {
    if (typeof text !== 'string') return invalid(['the response is not text']);
    const problems: string[] = [];
    if (text.length > LONG_RESPONSE_CHARS) problems.push(`very long response (${text.length} characters)`);
    const sqls = findBlocks(text, 'sql');
    const thinks = findBlocks(text, 'think');
    const thought =
      thinks
        .map((b) => b.inner.trim())
        .filter((s) => s !== '')
        .join('\n\n') || null;
    if (thinks.length === 0) problems.push('no <think> block');
    else if (thinks.some((b) => b.unclosed)) problems.push('unclosed <think>');
    const outside = removeBlocks(text, ['think', 'sql']).trim();
    if (outside !== '')
      problems.push(`${outside.length} characters outside <think> and <sql> (the format allows none)`);
    if (sqls.length === 0) {
      const shown = text.trim() === '' ? 'empty response' : `"${excerpt(text)}"`;
      return invalid([`no <sql> block (${shown})`, ...problems], thought ?? (outside || null));
    }
    // The format asks for exactly one; with several, the last is the one the reasoning ended on.
    const block = sqls[sqls.length - 1];
    if (sqls.length > 1) problems.push(`${sqls.length} <sql> blocks; the last one is used`);
    if (block.unclosed) problems.push('unclosed <sql>: taken to the end of the text');
    if (block.nested) problems.push('nested <sql> tags');
    if (thinks.some((b) => b.start < block.start && b.end > block.end))
      problems.push('the <sql> block is inside <think>');
    let inner = block.inner;
    const markup = /<\/?\s*(?:sql|think)(?:\s[^<>]*)?>/gi;
    if (markup.test(inner)) {
      if (!block.nested) problems.push('tags inside <sql> removed');
      inner = inner.replace(markup, ' ');
    }
    const unfenced = stripCodeFence(inner);
    if (unfenced.fenced) problems.push('code fence inside <sql> removed');
    if (unfenced.text === '') return invalid(['empty <sql> block', ...problems], thought);
    return { kind: 'execute', sql: unfenced.text, thought, mdp: this.mdp.forExecute(), problems };
  }

  respond(action: ParsedAction, exec: ExecResult | null, turnsLeft: number): Response {
    void exec;
    void turnsLeft;
    // Single-turn inference: the one answer is final, right or wrong; a turn without SQL ends with no answer.
    if (action.kind !== 'execute' || action.sql === null) {
      return { observations: [], done: true, end: 'invalid', finalSql: null };
    }
    return { observations: [], done: true, end: 'answer', finalSql: action.sql };
  }

  finalCall(): Observation | null {
    return null;
  }
}

/** Algorithm 1's rollout: the oracle's feedback after every SQL that does not match the gold, up to T turns. */
class ProgressOracleSession extends ProgressSession {
  private readonly gold: string;
  private readonly feedback: NonNullable<ProtocolContext['feedback']>;

  constructor(ctx: ProtocolContext) {
    super(ctx);
    const gold = ctx.task.gold;
    if (!ctx.feedback || typeof gold !== 'string' || gold.trim() === '') throw new Error(PROGRESS_REQUIRES);
    this.feedback = ctx.feedback;
    this.gold = gold;
  }

  override respond(action: ParsedAction, exec: ExecResult | null, turnsLeft: number): Response {
    void exec;
    if (action.kind !== 'execute' || action.sql === null) {
      if (turnsLeft <= 0) return { observations: [], done: true, end: 'budget', finalSql: null };
      return {
        observations: [{ role: 'user', content: PROGRESS_INVALID_MESSAGE }],
        done: false,
        end: null,
        finalSql: null,
      };
    }
    const fb = this.feedback(action.sql, { ...this.ctx.task, gold: this.gold });
    // Algorithm 1, lines 6-7: a SQL that matches the gold result ends the rollout there.
    if (fb === null) return { observations: [], done: true, end: 'answer', finalSql: action.sql };
    this.mdp.record(true);
    // Lines 9-13: feedback only while turns remain; the final SQL is the last one written either way.
    if (turnsLeft <= 0) return { observations: [], done: true, end: 'budget', finalSql: action.sql };
    return {
      observations: [{ role: 'user', content: progressFeedbackMessage(fb) }],
      done: false,
      end: null,
      finalSql: null,
    };
  }
}

export const progressProtocol: Protocol = {
  name: 'progress',
  defaults: PROGRESS_DEFAULTS,
  needsOracle: true,
  create(ctx: ProtocolContext): ProtocolSession {
    const mode = ctx.config.feedback ?? 'oracle';
    if (mode !== 'oracle' && mode !== 'none') {
      throw new Error(`progress protocol: feedback must be 'oracle' or 'none', got ${JSON.stringify(mode)}`);
    }
    return mode === 'none' ? new ProgressSession(ctx) : new ProgressOracleSession(ctx);
  },
};
