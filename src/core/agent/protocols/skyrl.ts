// SkyRL-SQL (Liu et al. 2025): <think> reasoning, <sql> probes answered with a dataframe <observation>, and a final
// <solution>. The prompt is the paper's Appendix A; `thinking` is App. D.2 (Qwen3-style models, no thinking
// instructions) and `noSchema` App. D.1 (table names only; the model explores with PRAGMA/SELECT).
import type { ExecResult } from '../../db/types';
import { renderObservation } from '../../db/observation';
import { renderSchema } from '../../db/schema/render';
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
  pythonErrorText,
  readTagTurn,
  restoreTagStop,
  schemaText,
} from './common';

export const SKYRL_STOPS = ['</sql>', '</solution>'];

/** What SkyRL-SQL's environment answers to a turn with no usable <sql> (skyrl-gym's SQL tool). */
export const SKYRL_INVALID_MESSAGE =
  'Your previous action is invalid. Follow the format of outputting thinking process and sql tool, and try again.';

const SKYRL_DEFAULTS: ProtocolConfig = {
  // §5: "All models are evaluated in multi-turn mode with up to 5 interaction turns".
  maxTurns: 5,
  thinking: false,
  noSchema: false,
  // The schema SkyRL-SQL trained on (OmniSQL's db_details) is DDL with example rows (App. D.1: "table and column
  // descriptions and example entries").
  schemaStyle: 'ddl',
  // App. A: "The returned dataframe will be truncated in 50 rows if observation is too long" — too long is 9000
  // characters in skyrl-gym.
  observationChars: 9000,
};

const TASK_OVERVIEW =
  'You are a data science expert. Below, you are provided with a database schema and a natural language question. ' +
  'Your task is to understand the schema and generate a valid SQL query to answer the question within limited turns. ' +
  'You should breakdown the problem, draft your reasoning process, and generate the solution.';

// App. D.1's replacement for the overview and the schema section.
const TASK_OVERVIEW_NO_SCHEMA =
  'You are a data science expert. Below, you are provided with a natural language question. ' +
  'Your task is to understand the schema and generate a valid SQL query to answer the question within limited turns. ' +
  'You should breakdown the problem, draft your reasoning process, and generate the solution.';

const NO_SCHEMA_LEAD =
  'You are not provided with the database schema and the table names. ' +
  'You need to figure out the database structure by yourself with the table names.';

const SCHEMA_NOTE =
  "This schema describes the database's structure, including tables, columns, primary keys, foreign keys, " +
  'and any relevant relationships or constraints.';

const INSTRUCTIONS = [
  '- Make sure you only output the information that is asked in the question. If the question asks for a ' +
    'specific column, make sure to only include that column in the SELECT clause, nothing more.',
  '- The generated query should return all of the information asked in the question without any missing ' +
    'or extra information.',
  // "analisying" is the paper's spelling.
  '- Before generating the final SQL query, please think through the steps of how to write the query. It ' +
    'should include detailed considerations such as analisying questions, summarizing relevant findings, ' +
    'brainstorming new ideas, verifying the accuracy of the current steps, refining any errors, thinking of ' +
    'how to call SQL tools, and revisiting previous steps.',
].join('\n');

const FORMAT_THINK =
  '- Conduct thinking inside <think>...</think> blocks every time you get new observation or information.';
const FORMAT_REST = [
  '- You can use SQL tool written within a single <sql>your sql</sql> block to explore or verify. SQL ' +
    'tool output will be shown as dataframe inside <observation>...</observation>. Based on this ' +
    'observation, you can think again and refine.',
  '- The returned dataframe will be truncated in 50 rows if observation is too long.',
  '- If you find no further exploration is needed or reaches max turns, you MUST directly provide the ' +
    'final SQL query solution inside <solution>...</solution>.',
].join('\n');

const EXAMPLE_SCHEMA = [
  'Table: animals',
  '- id (INTEGER, PRIMARY KEY)',
  '- species (TEXT)',
  '- age (INTEGER)',
  '- name (TEXT)',
].join('\n');
const EXAMPLE_OBSERVATION = [
  '<observation>',
  '+----------+',
  '| COUNT(*) |',
  '+----------+',
  '| 12       |',
  '+----------+',
  '</observation>',
].join('\n');
const EXAMPLE_SQL = "SELECT COUNT(*) FROM animals WHERE species = 'pig';";

function example(thinking: boolean): string {
  const think1 =
    "<think>I am querying how many pigs are in the farm. I will begin by checking if the 'animals' table " +
    "exists and contains entries with species = 'pig'.</think>";
  const think2 =
    '<think>The result indicates that there are 12 pigs in the farm. Since the question asks for how many ' +
    'pigs, I can now output the final SQL as the solution.</think>';
  return [
    // App. D.2 prints the opening marker this way; the closing one mirrors it.
    '----- START OF EXAMPLE -----',
    'Question: how many pigs are in the farm?',
    'Database Schema:',
    EXAMPLE_SCHEMA,
    ...(thinking ? [] : [think1]),
    `<sql>${EXAMPLE_SQL}</sql>`,
    EXAMPLE_OBSERVATION,
    ...(thinking ? [] : [think2]),
    `<solution>${EXAMPLE_SQL}</solution>`,
    '----- END OF EXAMPLE -----',
  ].join('\n');
}

/** The App. A prompt (with the D.1 / D.2 changes when configured), filled in for one task. */
function skyrlPrompt(ctx: ProtocolContext): string {
  const thinking = configBool(ctx.config, 'thinking', false);
  const noSchema = configBool(ctx.config, 'noSchema', false);
  const schema = noSchema
    ? `${NO_SCHEMA_LEAD} ${renderSchema(ctx.schema, { style: 'names' })}`
    : schemaText(ctx.schema, ctx.config, 'ddl');
  return [
    'Task Overview:',
    noSchema ? TASK_OVERVIEW_NO_SCHEMA : TASK_OVERVIEW,
    '',
    'Database Engine: SQLite',
    '',
    'Database Schema:',
    schema,
    SCHEMA_NOTE,
    '',
    'External Knowledge:',
    externalKnowledge(ctx.task.evidence, ctx.task.history),
    '',
    `Question: ${ctx.task.question}`,
    '',
    'Instructions:',
    INSTRUCTIONS,
    '',
    'Format:',
    ...(thinking ? [] : [FORMAT_THINK]),
    FORMAT_REST,
    '',
    example(thinking),
  ].join('\n');
}

/** skyrl-gym's observation: the result (or error), then the turns-left reminder, inside <observation>. */
function skyrlObservation(body: string, turnsLeft: number): Observation {
  return {
    role: 'user',
    content:
      `<observation>${body}\n<reminder>You have ${turnsLeft} turns left to complete the ` +
      `task.</reminder></observation>`,
  };
}

class SkyrlSession implements ProtocolSession {
  private readonly mdp = new MdpTracker();

  constructor(private readonly ctx: ProtocolContext) {}

  start(): ChatMessage[] {
    return [{ role: 'user', content: skyrlPrompt(this.ctx) }];
  }

  stop(): string[] {
    return [...SKYRL_STOPS];
  }

  restoreStop(text: string, stopString: string | null, finishReason: 'stop' | 'length' | 'abort' | 'error'): string {
    return restoreTagStop(String(text ?? ''), stopString, finishReason, SKYRL_STOPS);
  }

  parse(text: string): ParsedAction {
    if (typeof text !== 'string') return invalid(['the response is not text']);
    // Thinking models (App. D.2) may have their <think> moved out of the text by the server, so it is not required.
    const turn = readTagTurn(text, ['sql', 'solution'], ['think'], !configBool(this.ctx.config, 'thinking', false));
    if (!turn.block) return invalid([noActionProblem(text, ['sql', 'solution']), ...turn.problems], turn.thought);
    if (turn.body === '') return invalid([`empty <${turn.tag}> block`, ...turn.problems], turn.thought);
    const answer = turn.tag === 'solution';
    return {
      kind: answer ? 'answer' : 'execute',
      sql: turn.body,
      thought: turn.thought,
      mdp: answer ? this.mdp.forAnswer() : this.mdp.forExecute(),
      problems: turn.problems,
    };
  }

  respond(action: ParsedAction, exec: ExecResult | null, turnsLeft: number): Response {
    if (action.kind === 'answer' && action.sql !== null) {
      return { observations: [], done: true, end: 'answer', finalSql: action.sql };
    }
    let body: string;
    if (action.kind === 'execute' && action.sql !== null) {
      this.mdp.record(!exec?.ok);
      body = exec ? this.render(exec) : 'Error: the SQL was not run.';
    } else {
      body = SKYRL_INVALID_MESSAGE;
    }
    // skyrl-gym ends the episode without an observation once the turns are used up.
    if (turnsLeft <= 0) return { observations: [], done: true, end: 'budget', finalSql: null };
    return { observations: [skyrlObservation(body, turnsLeft)], done: false, end: null, finalSql: null };
  }

  finalCall(): Observation | null {
    return null;
  }

  private render(exec: ExecResult): string {
    if (!exec.ok) return pythonErrorText(exec);
    return renderObservation(exec, { format: 'df', maxChars: configNumber(this.ctx.config, 'observationChars', 9000) });
  }
}

export const skyrlProtocol: Protocol = {
  name: 'skyrl',
  defaults: SKYRL_DEFAULTS,
  create(ctx: ProtocolContext): ProtocolSession {
    return new SkyrlSession(ctx);
  },
};
