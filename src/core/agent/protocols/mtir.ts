// MTIR-SQL (2025): Qwen-style function calling. The system prompt declares `sql-execute_sql_query` inside <tools>
// (App. C.1); the model thinks in <think>, calls the tool with <tool_call>{"name", "arguments"}</tool_call>, sees
// <tool_response> with column names and at most 10 records, and ends with <answer> holding a ```sql block (App. C.2).
// A turn with neither a call nor an answer gets "My action is not correct. Let me rethink." appended to the model's own
// rollout (App. B, line 20: y ← y + ⟨…⟩), so the next generation continues that turn;
// at most B = 6 actions (§4.1, N = 6).
import type { ExecResult } from '../../db/types';
import { renderObservation } from '../../db/observation';
import type { Protocol, ProtocolContext, ProtocolSession, Response } from '../protocol';
import type { ChatMessage } from '../../models/types';
import type { Observation, ParsedAction, ProtocolConfig } from '../types';
import {
  MdpTracker,
  LONG_RESPONSE_CHARS,
  configNumber,
  invalid,
  readThought,
  restoreTagStop,
  schemaText,
  earlierInConversation,
} from './common';
import { findBlocks, stripCodeFence, excerpt, type TagBlock } from './tags';
import { parseLenientJson, type JsonValue } from './lenientJson';

const MTIR_TOOL_NAME = 'sql-execute_sql_query';
// Generation ends at a tool call or at a <tool_response> the model starts writing itself (App. B, line 8).
export const MTIR_STOPS = ['</tool_call>', '<tool_response>'];
export const MTIR_RETHINK_MESSAGE = 'My action is not correct. Let me rethink.';

const MTIR_DEFAULTS: ProtocolConfig = {
  maxTurns: 6,
  // §4.1: "database prompts from CodeS and SQL-R1" — DDL with example values.
  schemaStyle: 'ddl',
  // §4.1: "The feedback includes column headers and cell values for up to 10 rows."
  jsonRecords: 10,
  observationChars: 9000,
};

/** The tool signature exactly as App. C.1 prints it. */
export const MTIR_TOOL_JSON =
  '{"name": "sql-execute_sql_query", "description": "Execute SQL query and return partial results ' +
  'containing column names (maximum 10 records). ' +
  'Args:db_name (str): The name of the database. sql (str): The SQL query to execute. ' +
  'Returns:Dict[str, Union[List[Dict], Dict, None]]: A dictionary containing columns and data of the ' +
  'query (maximum of 10 records). ' +
  'Raises: TimeoutError: If the query execution exceeds the timeout. sqlite3.Error: If an error occurs ' +
  'during the query execution. ", ' +
  '"parameters": { "type": "object", "properties": { "db_name": {"title": "Db Name", "type": "string"}, ' +
  '"sql": {"title": "Sql", "type": "string"} }, "required": ["db_name", "sql"] } }';

/** App. C.1 (the closing tag, printed `</tool_call}`, is written as the tag it is). */
const MTIR_SYSTEM_PROMPT = [
  '##Tools',
  '',
  'You may call one or more functions to assist with the user query.',
  '',
  'You are provided with function signatures within <tools></tools> XML tags:',
  '<tools>',
  MTIR_TOOL_JSON,
  '</tools>',
  '',
  'For each function call, return a JSON object with function name and arguments within ' +
    '<tool_call></tool_call> XML tags:',
  '<tool_call>',
  '{"name": <function-name>, "arguments": <args-json-object>}',
  '</tool_call>',
].join('\n');

/**
 * The opening messages without the tool's declaration, for a trainer whose chat template declares the tool itself
 * (verl's tool agent loop renders the prompt with `tools=`): MTIR's system message is the declaration and nothing
 * else, so it is left out and the template's own `# Tools` block (the same wording, the same signature from
 * quarry_trainer/verl/tool_config.yaml) takes its place. Throws when the messages do not hold that system message.
 */
export function mtirPromptForTemplateTools(messages: readonly ChatMessage[]): ChatMessage[] {
  const at = messages.findIndex((m) => m.role === 'system' && m.content === MTIR_SYSTEM_PROMPT);
  if (at < 0) throw new Error("MTIR's opening messages have no tool-declaring system message to leave out");
  return messages.filter((_, i) => i !== at);
}

function dbName(ctx: ProtocolContext): string {
  if (ctx.task.dbId) return ctx.task.dbId;
  const base = ctx.task.dbPath.split(/[\\/]/).pop() ?? ctx.task.dbPath;
  return base.replace(/\.(sqlite3?|db)$/i, '');
}

/** App. C.2, filled in. "{external_knowledge} + {question}" is the evidence, then the question. */
function mtirUserPrompt(ctx: ProtocolContext): string {
  const evidence = ctx.task.evidence?.trim();
  const history = earlierInConversation(ctx.task.history);
  const question = [evidence, ctx.task.question].filter((s) => s).join(' ');
  return [
    'You are a helpful SQL expert assistant. You should first think about how to write the SQL query by ' +
      'analyzing the question, database schema, and external knowledge, then validate your SQL with the tool ' +
      'until it is correct. Finally, you provide the final SQL query in <answer> </answer>.',
    '',
    'Task Configuration',
    'Database Engine: SQLite',
    `Database: ${dbName(ctx)}`,
    'Database Schema:',
    schemaText(ctx.schema, ctx.config, 'ddl'),
    ...(history ? [history] : []),
    `User Question: ${question}`,
    '',
    'Requirements',
    '1. Precision: Make sure you only output the information that is asked in the question. If the ' +
      'question asks for a specific column, make sure to only include that column in the SELECT clause, ' +
      'nothing more.',
    '2. Completeness: The generated query should return all of the information asked in the question ' +
      'without any missing or extra information.',
    '3. Correctness: Before generating the final SQL query, please think through the steps of how to ' +
      'write the query. Validate your SQL through tool testing.',
    '',
    'Output Format:',
    'Important: Use EITHER thinking + tool calls OR thinking + final answer. Do not mix the structures.',
    'Option A (when validation needed):',
    '<think> Your analysis... </think>',
    '[Tool calls for validation]',
    'Option B (final answer):',
    '<think> Your final analysis... </think>',
    '<answer>',
    '```sql',
    'YOUR_SQL_QUERY',
    '</answer>',
  ].join('\n');
}

function mtirObservation(body: string): Observation {
  // §3.2: the result goes back "in the user role", wrapped as the tool response.
  return { role: 'user', content: `<tool_response>\n${body}\n</tool_response>` };
}

interface CallRead {
  sql: string | null;
  problems: string[];
}

function isObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads one <tool_call> body into the SQL it asks for, naming every tolerance and rejecting what is unusable. */
export function readToolCall(body: string, expectedDb: string): CallRead {
  const problems: string[] = [];
  // Only a fence that opens the block wraps the JSON; a fence further in belongs to the SQL inside a string.
  const fencedJson = /^\s*(?:```|‘‘‘)/.test(body);
  const unfenced = fencedJson ? stripCodeFence(body.replace(/‘‘‘|’’’/g, '```')) : { text: body.trim(), fenced: false };
  if (unfenced.fenced) problems.push('code fence around the tool-call JSON removed');
  const parsed = parseLenientJson(unfenced.text);
  if (parsed.value === undefined) return { sql: null, problems: [`tool call is not JSON (${parsed.error})`] };
  for (const t of parsed.tolerated) problems.push(`tool-call JSON: ${t}`);
  const call = Array.isArray(parsed.value) ? parsed.value[0] : parsed.value;
  if (Array.isArray(parsed.value)) problems.push(`tool call is a list of ${parsed.value.length}; the first is used`);
  if (!isObject(call)) return { sql: null, problems: [...problems, 'tool call is not a JSON object'] };
  const extra = Object.keys(call).filter((k) => k !== 'name' && k !== 'arguments');
  const name = call.name;
  if (typeof name !== 'string') problems.push('tool call has no "name"');
  else if (name !== MTIR_TOOL_NAME) {
    if (!/execute_sql/i.test(name))
      return {
        sql: null,
        problems: [...problems, `unknown tool "${excerpt(name, 40)}"; the only tool is ${MTIR_TOOL_NAME}`],
      };
    problems.push(`tool name "${excerpt(name, 40)}" taken as ${MTIR_TOOL_NAME}`);
  }
  let args: JsonValue | undefined = call.arguments;
  if (typeof args === 'string') {
    // OpenAI-style arguments: a JSON document inside a string.
    const inner = parseLenientJson(args);
    if (inner.value === undefined)
      return { sql: null, problems: [...problems, `"arguments" is a string that is not JSON (${inner.error})`] };
    problems.push('"arguments" given as a JSON string', ...inner.tolerated.map((t) => `arguments JSON: ${t}`));
    args = inner.value;
  }
  if (args === undefined && typeof call.sql === 'string') {
    problems.push('"sql" given beside "name" instead of inside "arguments"');
    args = { sql: call.sql, ...(typeof call.db_name === 'string' ? { db_name: call.db_name } : {}) };
    extra.splice(0, extra.length, ...extra.filter((k) => k !== 'sql' && k !== 'db_name'));
  }
  if (extra.length > 0) problems.push(`extra keys ignored: ${extra.join(', ')}`);
  if (!isObject(args)) return { sql: null, problems: [...problems, 'tool call has no "arguments" object'] };
  const argExtra = Object.keys(args).filter((k) => k !== 'sql' && k !== 'db_name');
  if (argExtra.length > 0) problems.push(`extra arguments ignored: ${argExtra.join(', ')}`);
  const db = args.db_name;
  if (db === undefined) problems.push('"db_name" missing; the task\'s database is used');
  else if (typeof db !== 'string' || db !== expectedDb)
    problems.push(
      `db_name ${JSON.stringify(db)} is not this task's database "${expectedDb}"; the task's database is used`,
    );
  const sql = args.sql;
  if (typeof sql !== 'string') return { sql: null, problems: [...problems, 'tool call has no "sql" string'] };
  const cleaned = stripCodeFence(sql);
  if (cleaned.fenced) problems.push('code fence inside the "sql" argument removed');
  if (cleaned.text === '') return { sql: null, problems: [...problems, 'empty "sql" argument'] };
  return { sql: cleaned.text, problems };
}

/** The SQL of an <answer>: the ```sql block inside it (the format asks for one), else the answer text itself. */
function readAnswer(inner: string): CallRead {
  const problems: string[] = [];
  const text = inner.replace(/‘‘‘|’’’/g, '```');
  const unfenced = stripCodeFence(text);
  if (!unfenced.fenced) problems.push('no ```sql block in <answer>; its text is taken as the SQL');
  else if (unfenced.lang !== 'sql' && unfenced.lang !== 'sqlite')
    problems.push(`code fence in <answer> is ${unfenced.lang ? `"${unfenced.lang}"` : 'unlabelled'}, not sql`);
  const stray = /<\/?\s*(?:think|tool_call|tool_response|answer)(?:\s[^<>]*)?>/gi;
  let sql = unfenced.text;
  if (stray.test(sql)) {
    problems.push('tags inside <answer> removed');
    sql = sql.replace(stray, ' ').trim();
  }
  if (sql === '') return { sql: null, problems: [...problems, 'empty <answer>'] };
  return { sql, problems };
}

class MtirSession implements ProtocolSession {
  private readonly mdp = new MdpTracker();
  private readonly db: string;

  constructor(private readonly ctx: ProtocolContext) {
    this.db = dbName(ctx);
  }

  start(): ChatMessage[] {
    return [
      { role: 'system', content: MTIR_SYSTEM_PROMPT },
      { role: 'user', content: mtirUserPrompt(this.ctx) },
    ];
  }

  stop(): string[] {
    return [...MTIR_STOPS];
  }

  restoreStop(text: string, stopString: string | null, finishReason: 'stop' | 'length' | 'abort' | 'error'): string {
    const t = String(text ?? '');
    // A stop at <tool_response> means the model began to invent the tool's answer; there is nothing to restore.
    if (stopString === '<tool_response>') return t;
    return restoreTagStop(t, stopString, finishReason, ['</tool_call>', '</answer>']);
  }

  parse(text: string): ParsedAction {
    if (typeof text !== 'string') return invalid(['the response is not text']);
    const problems: string[] = [];
    if (text.length > LONG_RESPONSE_CHARS) problems.push(`very long response (${text.length} characters)`);
    const calls = findBlocks(text, 'tool_call');
    const answers = findBlocks(text, 'answer');
    const first = [...calls, ...answers].sort((a, b) => a.start - b.start)[0] as TagBlock | undefined;
    const thought = this.thought(text, first ? first.start : text.length, problems);
    if (!first) {
      const shown = text.trim() === '' ? 'empty response' : `"${excerpt(text)}"`;
      return invalid([`no <tool_call> or <answer> (${shown})`, ...problems], thought);
    }
    if (calls.length > 0 && answers.length > 0) {
      problems.push(
        `a tool call and an answer in one turn (the format says not to mix them); the first, <${first.tag}>, is used`,
      );
    } else if (first.tag === 'tool_call' && calls.length > 1) {
      problems.push(`${calls.length} tool calls in one turn; the first is used (generation stops at </tool_call>)`);
    } else if (first.tag === 'answer' && answers.length > 1) {
      problems.push(`${answers.length} <answer> blocks; the first is used`);
    }
    if (first.unclosed) problems.push(`unclosed <${first.tag}>: taken to the end of the text`);
    if (first.nested) problems.push(`nested <${first.tag}> tags`);
    if (/<tool_response>/i.test(text.slice(first.start)))
      problems.push('the model wrote its own <tool_response>; ignored');
    if (first.tag === 'answer') {
      const a = readAnswer(first.inner);
      if (a.sql === null) return invalid([...problems, ...a.problems], thought);
      return { kind: 'answer', sql: a.sql, thought, mdp: this.mdp.forAnswer(), problems: [...problems, ...a.problems] };
    }
    const inner = first.unclosed ? first.inner.split(/<tool_response>/i)[0] : first.inner;
    const c = readToolCall(inner, this.db);
    if (c.sql === null) return invalid([...problems, ...c.problems], thought);
    return { kind: 'execute', sql: c.sql, thought, mdp: this.mdp.forExecute(), problems: [...problems, ...c.problems] };
  }

  private thought(text: string, cut: number, problems: string[]): string | null {
    // MTIR-SQL trains Qwen3, whose chat template may open <think> in the prompt.
    return readThought(text.slice(0, cut), ['think'], problems, cut < text.length, true);
  }

  respond(action: ParsedAction, exec: ExecResult | null, turnsLeft: number): Response {
    if (action.kind === 'answer' && action.sql !== null) {
      return { observations: [], done: true, end: 'answer', finalSql: action.sql };
    }
    let observation: Observation;
    if (action.kind === 'execute' && action.sql !== null) {
      this.mdp.record(!exec?.ok);
      observation = mtirObservation(exec ? this.render(exec) : 'Error: the SQL was not run.');
    } else {
      // App. B line 20 appends the rethink text to the rollout y itself (the model's own sequence), not as a user turn.
      observation = { role: 'assistant', content: MTIR_RETHINK_MESSAGE };
    }
    // App. B: once the action budget is spent the rollout simply ends (the last tool response is still inserted).
    if (turnsLeft <= 0) return { observations: [observation], done: true, end: 'budget', finalSql: null };
    return { observations: [observation], done: false, end: null, finalSql: null };
  }

  finalCall(): Observation | null {
    return null;
  }

  private render(exec: ExecResult): string {
    return renderObservation(exec, {
      format: 'json',
      jsonRecords: configNumber(this.ctx.config, 'jsonRecords', 10),
      maxChars: configNumber(this.ctx.config, 'observationChars', 9000),
    });
  }
}

export const mtirProtocol: Protocol = {
  name: 'mtir',
  defaults: MTIR_DEFAULTS,
  create(ctx: ProtocolContext): ProtocolSession {
    return new MtirSession(ctx);
  },
};
