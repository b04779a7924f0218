// MTSQL-R1's texts, quoted from the paper: the instruction prompt of App. D ("PROMPT FOR OURS"), the two tool
// schemas and their return messages of App. B.0.1. The PDF wrapped long lines and turned quotes typographic; the
// lines are joined again and the quotes are the ASCII ones the App. D traces show (the strings a Python tool emits).

/** App. D, "PROMPT FOR OURS": the instructions before the dialogue. */
export const MTSQLR1_INSTRUCTIONS = [
  'You are a SQL expert. Your task is to translate a natural language question into SQL through ' +
    'step-by-step reasoning. Please follow the steps:',
  '',
  '1. Reasoning',
  '   - Always think step by step before calling the tool. Draft the SQL.',
  "2. Calling 'exec_sql' tool (Please call 'exec_sql' tool at least once)",
  "   - Call the 'exec_sql' tool to execute the current generated SQL and verify the execution results " +
    'based on questions.',
  '   - conclude <exec_verify>pass</exec_verify> if results are reasonable, otherwise ' +
    '<exec_verify>no_pass</exec_verify>.',
  "   - If no_pass, refine the SQL using the execution results and repeat call 'exec_sql' tool until it passes.",
  '',
  'Note:',
  '',
  "1. Please call 'exec_sql' tool at least once",
  '2. Return the final SQL enclosed in: <answer_sql> ... </answer_sql>',
].join('\n');

/** App. D: the line that introduces the earlier turns of the dialogue. */
export const HISTORY_HEADER = 'Here are previous question and corresponding correct SQL in this dialogue:';

/** App. D: the line before the current question. */
export const CURRENT_HEADER = 'Now please translate the following question to SQL step by step';

/** App. D: what follows the current question (D.1's spelling). */
export const QUESTION_NOTE =
  '(Note you only need to translate the question to SQL instead answer the question. Once you feel you ' +
  'are ready for the final SQL, directly return the SQL inside <answer_sql> and </answer_sql> at the end ' +
  "of your response.\nNote please call 'exec_sql' tool at least once)";

/** App. B.0.1 tool schemas (the `tool_schema` entries of the two tool configurations). */
const EXEC_SQL_TOOL = {
  type: 'function',
  function: {
    name: 'exec_sql',
    description: 'A tool for executing sql and return the query results',
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', description: 'The current generated SQL that will be executed' } },
      required: ['code'],
    },
  },
} as const;

const MEMORY_RETRIEVE_TOOL = {
  type: 'function',
  function: {
    name: 'memory_retrieve',
    description: 'A tool for retrieving the historical questions and ground-truth SQL in this dialogue',
    parameters: {
      type: 'object',
      properties: {
        code: {
          type: 'string',
          description: 'The current generated SQL that needs to be verified coherence with the given historical memory',
        },
      },
      required: ['code'],
    },
  },
} as const;

export const TOOL_NAMES = ['exec_sql', 'memory_retrieve'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** JSON as Python's json.dumps writes it (", " and ": "), which is how a Hugging Face chat template prints tools. */
function pyJsonDumps(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return '[' + value.map(pyJsonDumps).join(', ') + ']';
  return (
    '{' +
    Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyJsonDumps(v)}`)
      .join(', ') +
    '}'
  );
}

/**
 * The tool block of the system message. The paper passes the schemas to SGLang as tools, and the Qwen3 chat template
 * prints them this way; writing it ourselves gives the same tokens on any backend, with or without tool support.
 */
export function toolsSystemMessage(): string {
  return [
    '# Tools',
    '',
    'You may call one or more functions to assist with the user query.',
    '',
    'You are provided with function signatures within <tools></tools> XML tags:',
    '<tools>',
    pyJsonDumps(EXEC_SQL_TOOL),
    pyJsonDumps(MEMORY_RETRIEVE_TOOL),
    '</tools>',
    '',
    'For each function call, return a json object with function name and arguments within ' +
      '<tool_call></tool_call> XML tags:',
    '<tool_call>',
    '{"name": <function-name>, "arguments": <args-json-object>}',
    '</tool_call>',
  ].join('\n');
}

/** App. B.0.1: the return message of `exec_sql`. */
export function execRecap(currentQ: string, code: string, returnMsg: string): string {
  return [
    'Recap:',
    `- Current question: ${currentQ}`,
    `- Generated SQL: ${code}`,
    `- SQL execution results (truncated to 200 characters): ${returnMsg}`,
    '',
    'Now please:',
    '1. Verify whether the SQL execution results are valid:',
    '   - Check if the SQL runs without errors.',
    '   - Check if the returned columns exist in the schema and are relevant to the question.',
    '   - Check if the results contain unexpected NULL values, empty sets, or error messages.',
    '',
    '2. After verifying, output:',
    '   - <exec_verify>pass</exec_verify> if the results are valid and consistent with the schema.',
    '   - <exec_verify>no_pass</exec_verify> if the results show errors, irrelevant columns, or invalid values.',
    '',
    '3. If <exec_verify>no_pass</exec_verify>, think step by step, refine the SQL and provide a corrected ' +
      "SQL and then execute it via re-calling 'exec_sql' tool again via <tool_call>. Repeat until you get " +
      'valid results.',
    '',
    "4. If <exec_verify>pass</exec_verify>, You have to call 'memory_retrieve' tool via <tool_call> at " +
      'least once to ensure the current generated SQL is coherent with the historical memory.',
  ].join('\n');
}

/** App. B.0.1: the return message of `memory_retrieve` (the coherence verifier). */
export function memoryMessage(currentQ: string, code: string, executionResults: string, memoryStr: string): string {
  return [
    'You are a coherence verifier for Multi-turn Text2SQL.',
    '',
    `Current Question: ${currentQ}`,
    `Proposed SQL: ${code}`,
    `The execution results of the proposed SQL: ${executionResults}`,
    '',
    'Memory (historical information in order):',
    memoryStr,
    '',
    'Your tasks:',
    '1. Verify whether the Proposed SQL is coherent with the Current Question and the Memory, based on ' +
      'the relation between the Current Question and Historical Questions.',
    '   - If the Current Question introduces changes (new columns, conditions, ordering, etc.), SQL ' +
      'should update accordingly.',
    '   - If not, SQL must remain consistent with the Historical Questions.',
    '',
    'Step-by-step reasoning checklist:',
    '1. First parse the Proposed SQL into its components (SELECT, FROM, WHERE, GROUP BY, HAVING, ORDER BY, JOINs).',
    '2. Check tables are consistent with context.',
    '3. Check selected columns match current and historical intent.',
    '4. Check conditions (WHERE/GROUP/HAVING) reflect the relation between current and past questions.',
    '5. Check ordering (ORDER BY) is preserved unless explicitly changed.',
    '6. Verify that joins and table relationships follow the established context.',
    '7. Make sure the SQL and the execution results of the proposed SQL answer the current question while ' +
      'remaining logically coherent with the conversation history and execution results.',
    '',
    '2. After verifying, output one of the following:',
    "   - '<memory_verify>pass</memory_verify>' if coherent.",
    "   - '<memory_verify>no_pass</memory_verify>' if not coherent.",
    '',
    "3. If 'no_pass': explain issues, think step by step to refine SQL, and then please call 'exec_sql' " +
      'tool again via <tool_call> to check the corrected SQL and get the execution results. Repeat until you ' +
      "get 'pass'.",
    '',
    "4. If 'pass': return the final SQL inside '<answer_sql>...</answer_sql>'.",
    '',
    "Note finally you should return the final SQL inside '<answer_sql>...</answer_sql>",
  ].join('\n');
}

/** A tool's return message as the model sees it: the Qwen3 template wraps tool messages in <tool_response>. */
export function toolResponse(body: string): string {
  return `<tool_response>\n${body}\n</tool_response>`;
}

/**
 * Not in the paper (its tools never see a turn without a call): what a turn with no usable action gets back, in the
 * same instruction style, naming what was wrong.
 */
export function invalidActionMessage(problems: string[]): string {
  const why = problems.length > 0 ? problems.join('; ') : 'no tool call and no final SQL';
  return [
    `Your response did not contain a usable action (${why}).`,
    'Call a tool via <tool_call>, e.g. <tool_call>\n{"name": "exec_sql", "arguments": {"code": "SELECT ' +
      '..."}}\n</tool_call> (or "memory_retrieve" with the same arguments), or return the final SQL inside ' +
      '<answer_sql>...</answer_sql>.',
  ].join('\n');
}
