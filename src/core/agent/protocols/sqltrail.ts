// SQL-Trail (2025): <reasoning> then <sql> each turn, DataFrame observations with column headers, "You have (T−t)
// turns left to complete the task." inside every observation, the invalid-action message of Algorithm 1, and one
// last generation that must give <solution> when the budget T runs out (Algorithm 1, line 31). The prompt is the
// "System Prompt for Multi-turn Text-to-SQL Agent" of Appendix A.8, with its schema-selection instructions.
import type { ExecResult } from '../../db/types';
import { renderObservation } from '../../db/observation';
import type { Hardness } from '../../sql/hardness';
import type { Protocol, ProtocolContext, ProtocolSession, Response } from '../protocol';
import type { ChatMessage } from '../../models/types';
import type { Observation, ParsedAction, ProtocolConfig } from '../types';
import {
  MdpTracker,
  configBool,
  configNumber,
  externalKnowledge,
  invalid,
  noActionProblem,
  readTagTurn,
  restoreTagStop,
  schemaText,
} from './common';

const SQLTRAIL_STOPS = ['</sql>', '</solution>'];

/** Algorithm 1, line 22. */
export const SQLTRAIL_INVALID_MESSAGE = 'Your previous action is invalid. Think and try again.';

const SQLTRAIL_DEFAULTS: ProtocolConfig = {
  // §4 / App. A.5: "a 10-turn trajectory cap", "maximum turn budget of ten".
  maxTurns: 10,
  adaptive: false,
  // Algorithm 1 answers a failed statement with the invalid-action message only; true adds the engine's error.
  errorDetail: false,
  schemaStyle: 'list',
  observationChars: 9000,
};

/**
 * SQL-Trail's difficulty-aware turn budget. Eq. 7 (App. A.4) rewards finishing within 2 turns for simple (Spider
 * easy) questions, 3 for medium, and any t < T for hard and extra (when correct); with `adaptive` the environment
 * applies those thresholds as the episode's budget. Unknown difficulty gets T. Never more than T, never below 1.
 */
export function sqlTrailBudget(difficulty: Hardness | undefined, T: number): number {
  const cap = Math.max(1, Math.floor(T));
  if (difficulty === 'easy') return Math.min(cap, 2);
  if (difficulty === 'medium') return Math.min(cap, 3);
  return cap;
}

const INSTRUCTIONS = [
  '1. Make sure you only output the information that is asked in the question. If the question asks for a ' +
    'specific column, make sure to only include that column in the SELECT clause, nothing more.',
  '2. The generated query should return all of the information asked in the question without any missing ' +
    'or extra information.',
  '3. In your first response, you must identify all tables and columns from the database schema that are ' +
    'relevant to answering the question.',
  '4. Before generating the final SQL query you should reflect through previous steps and refine any ' +
    'errors previous steps.',
].join('\n');

// Quoted as printed, including "nothing more." after rule 1 and the ellipsis characters.
const FORMAT = [
  '1. Conduct thinking inside <reasoning>…</reasoning> blocks every time you get new observation or ' +
    'information. nothing more.',
  '2. You can use SQL tool written within a single <sql>your sql</sql> block to explore or verify. SQL ' +
    'tool output will be shown as dataframe inside <observation>…</observation>. Based on this observation, ' +
    'you can think again and refine.',
  '3. The returned dataframe will be truncated in 50 rows if observation is too long.',
  '4. If you find no further exploration is needed or reaches max turns, directly provide the final sql ' +
    'in <solution>…</solution>',
].join('\n');

// The example as printed (its turns use <think>, as the appendix does; "Relavent" is the paper's spelling).
const EXAMPLE = [
  '------------------------ START OF EXAMPLE ------------------------',
  'Question: what is the average price of all products?',
  '',
  'Database Schema:',
  '    Table: products',
  '    - id (INTEGER, PRIMARY KEY)',
  '    - name (TEXT)',
  '    - price (REAL)',
  '',
  '<think>I need to find the average price of all items listed in the products table.',
  '',
  'Relavent tables and columns:',
  '- ’products’:’price’',
  '',
  'To solve this problem I should issue a simple aggregate query using',
  'AVG(price).</think>',
  '<sql>SELECT AVG(price) FROM products;</sql>',
  '<observation>',
  '   AVG(price)',
  '0       24.75',
  '</observation>',
  '<think>The result shows that the average product price is 24.75. The question asks',
  'for the average price, so I can directly return this SQL query as the final',
  'solution.</think>',
  '<solution>SELECT AVG(price) FROM products;</solution>',
  '------------------------ END OF EXAMPLE ------------------------',
].join('\n');

function sqlTrailPrompt(ctx: ProtocolContext): string {
  return [
    'Task Overview:',
    'You are a helpful text-to-SQL expert assistant. Below, you are provided with a database schema and a ' +
      'natural language question. Your task is to understand the schema and generate a valid SQL query to ' +
      'answer the question within limited turns. You should breakdown the problem, draft your reasoning ' +
      'process, and generate the solution.',
    '',
    'Database Engine:',
    'SQLite',
    '',
    'Database Schema:',
    schemaText(ctx.schema, ctx.config, 'list'),
    '',
    'External Knowledge:',
    externalKnowledge(ctx.task.evidence, ctx.task.history),
    '',
    'Question:',
    ctx.task.question,
    '',
    'Instructions:',
    INSTRUCTIONS,
    '',
    'Format:',
    FORMAT,
    EXAMPLE,
  ].join('\n');
}

/**
 * Algorithm 1, line 26: the observation with "You have (T−t) turns left". The algorithm's t is the 0-based index of
 * the turn just taken, so T−t counts that turn too: it is the environment's turns-left plus one (1 on the last turn,
 * which the final generation then uses).
 */
function sqlTrailObservation(body: string, turnsLeft: number): Observation {
  return {
    role: 'user',
    content: `<observation>\n${body}\nYou have ${turnsLeft + 1} turns left to complete the task.\n</observation>`,
  };
}

/** Where a turn ends in Algorithm 1 (line 10), besides the end of sequence. */
const TURN_STOPS = [...SQLTRAIL_STOPS, '</reasoning>'];

class SqlTrailSession implements ProtocolSession {
  private readonly mdp = new MdpTracker();
  private final = false;
  /** Whether the last turn parsed had no <sql> or <solution> block at all (Algorithm 1 then appends no observation). */
  private noAction = false;

  constructor(private readonly ctx: ProtocolContext) {}

  start(): ChatMessage[] {
    // Table 4 calls the prompt that carries the schema "the initial user prompt", so it goes in as the user turn.
    return [{ role: 'user', content: sqlTrailPrompt(this.ctx) }];
  }

  stop(): string[] {
    // Algorithm 1 (lines 8-11) ends a turn at </reasoning>, </sql>, </solution> or <eos>; each of them uses up a turn
    // (line 29). The final generation (line 31) is after a <solution> block.
    return this.final ? ['</solution>'] : [...TURN_STOPS];
  }

  restoreStop(text: string, stopString: string | null, finishReason: 'stop' | 'length' | 'abort' | 'error'): string {
    return restoreTagStop(String(text ?? ''), stopString, finishReason, TURN_STOPS);
  }

  parse(text: string): ParsedAction {
    if (typeof text !== 'string') return invalid(['the response is not text']);
    // The format asks for <reasoning>; the appendix's own example and the format reward use <think>: both count.
    const turn = readTagTurn(text, ['sql', 'solution'], ['reasoning', 'think']);
    this.noAction = !turn.block;
    if (!turn.block) return invalid([noActionProblem(text, ['sql', 'solution']), ...turn.problems], turn.thought);
    if (turn.body === '') return invalid([`empty <${turn.tag}> block`, ...turn.problems], turn.thought);
    if (turn.tag === 'solution' || this.final) {
      const problems =
        turn.tag === 'sql'
          ? ['the final generation gave <sql> instead of <solution>; taken as the answer', ...turn.problems]
          : turn.problems;
      return { kind: 'answer', sql: turn.body, thought: turn.thought, mdp: this.mdp.forAnswer(), problems };
    }
    return {
      kind: 'execute',
      sql: turn.body,
      thought: turn.thought,
      mdp: this.mdp.forExecute(),
      problems: turn.problems,
    };
  }

  respond(action: ParsedAction, exec: ExecResult | null, turnsLeft: number): Response {
    if (action.kind === 'answer' && action.sql !== null) {
      return { observations: [], done: true, end: 'answer', finalSql: action.sql };
    }
    if (action.kind === 'invalid' && this.noAction) {
      // Algorithm 1 lines 15-29: a turn with neither <solution> nor <sql> (it stopped at </reasoning>, or ended) gets
      // no observation; it still uses up its turn, and the next generation continues from the history.
      return turnsLeft <= 0
        ? { observations: [], done: true, end: 'budget', finalSql: null }
        : { observations: [], done: false, end: null, finalSql: null };
    }
    let body = SQLTRAIL_INVALID_MESSAGE;
    if (action.kind === 'execute' && action.sql !== null) {
      const failed = !exec?.ok;
      this.mdp.record(failed);
      if (exec?.ok)
        body = renderObservation(exec, {
          format: 'df',
          maxChars: configNumber(this.ctx.config, 'observationChars', 9000),
        });
      else if (exec && configBool(this.ctx.config, 'errorDetail', false))
        body = `${SQLTRAIL_INVALID_MESSAGE}\n${exec.error ?? ''}`.trimEnd();
    }
    const observation = sqlTrailObservation(body, Math.max(0, turnsLeft));
    // Out of turns: the observation still goes in (line 27), then finalCall() asks for the answer (line 31).
    if (turnsLeft <= 0) return { observations: [observation], done: true, end: 'budget', finalSql: null };
    return { observations: [observation], done: false, end: null, finalSql: null };
  }

  finalCall(): Observation | 'history' | null {
    // Algorithm 1 line 31: the final <solution> is generated from the history alone (x, h), with no added message.
    this.final = true;
    return 'history';
  }
}

export const sqlTrailProtocol: Protocol = {
  name: 'sqltrail',
  defaults: SQLTRAIL_DEFAULTS,
  create(ctx: ProtocolContext): ProtocolSession {
    return new SqlTrailSession(ctx);
  },
};
