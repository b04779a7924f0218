// Writes the tiny model's training conversations: questions about the bundled sample databases, each answered the
// way the `skyrl` protocol expects (a <sql> turn, the real observation, then a <solution> turn). The prompts and the
// observations come from the project's own protocol and SQL runner, so the model is trained on exactly the text it
// will be shown at run time. Output: one JSON object per line, {db, question, sql, messages}.
//
// Run through scripts/tiny-model/episodes.mjs (which bundles this file); train.py calls it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '../../src/core/models/types';
import type { Protocol, ProtocolSession } from '../../src/core/agent/protocol';
import type { ParsedAction } from '../../src/core/agent/types';
import type { ExecResult } from '../../src/core/db/types';
import type { SchemaInfo } from '../../src/core/db/schema/types';
import { getProtocol } from '../../src/core/agent/protocols';
import { openReadOnly } from '../../src/core/db/open';
import { runStatement } from '../../src/core/db/runStatement';
import { introspectSchema, renderSchema } from '../../src/core/db/schema';
import { renderObservation } from '../../src/core/db/observation';
import { bookshopQuestions, type QA } from './questions';
import { type TransitQA, transitQuestions } from './transit';

interface Episode {
  db: string;
  question: string;
  sql: string;
  messages: ChatMessage[];
  prompt: 'skyrl' | 'fallback';
}

/**
 * Used only while the skyrl protocol module is not in the build: the SkyRL-SQL paper's Appendix A prompt and its
 * <observation> wrapping. train.py records which one was used, so a model trained on this is easy to spot.
 */
function fallbackSession(question: string, schema: SchemaInfo): ProtocolSession {
  const prompt = [
    'Task Overview:',
    'You are a data science expert. Below, you are provided with a database schema and a natural language ' +
      'question. Your task is to understand the schema and generate a valid SQL query to answer the question ' +
      'within limited turns. You should breakdown the problem, draft your reasoning process, and generate ' +
      'the solution.',
    '',
    'Database Engine:',
    'SQLite',
    '',
    'Database Schema:',
    renderSchema(schema, { style: 'ddl' }),
    "This schema describes the database's structure, including tables, columns, primary keys, foreign " +
      'keys, and any relevant relationships or constraints.',
    '',
    'External Knowledge:',
    '',
    '',
    'Question:',
    question,
    '',
    'Instructions:',
    '- Make sure you only output the information that is asked in the question. If the question asks for ' +
      'a specific column, make sure to only include that column in the SELECT clause, nothing more.',
    '- The generated query should return all of the information asked in the question without any missing ' +
      'or extra information.',
    '- Before generating the final SQL query, please think through the steps of how to write the query. ' +
      'It should include detailed considerations such as analisying questions, summarizing relevant ' +
      'findings, brainstorming new ideas, verifying the accuracy of the current steps, refining any errors, ' +
      'thinking of how to call SQL tools, and revisiting previous steps.',
    '',
    'Format:',
    '- Conduct thinking inside <think>...</think> blocks every time you get new observation or information.',
    '- You can use SQL tool written within a single <sql>your sql</sql> block to explore or verify. SQL ' +
      'tool output will be shown as dataframe inside <observation>...</observation>. Based on this ' +
      'observation, you can think again and refine.',
    '- The returned dataframe will be truncated in 50 rows if observation is too long.',
    '- If you find no further exploration is needed or reaches max turns, you MUST directly provide the ' +
      'final SQL query solution inside <solution>...</solution>.',
  ].join('\n');
  const tag = (text: string, name: string) =>
    new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(text)?.[1]?.trim() ?? null;
  return {
    start: () => [{ role: 'user', content: prompt }],
    stop: () => ['</sql>', '</solution>'],
    restoreStop: (text, stop) => text + (stop ?? ''),
    parse(text): ParsedAction {
      const solution = tag(text, 'solution');
      const sql = tag(text, 'sql');
      const kind = solution !== null ? 'answer' : sql !== null ? 'execute' : 'invalid';
      return { kind, sql: solution ?? sql, thought: tag(text, 'think'), mdp: [], problems: [] };
    },
    respond(_action, exec, _turnsLeft) {
      const body = exec ? renderObservation(exec, { format: 'df' }) : '';
      return {
        observations: [{ role: 'user', content: `<observation>\n${body}\n</observation>` }],
        done: false,
        end: null,
        finalSql: null,
      };
    },
    finalCall: () => null,
  };
}

function skyrlProtocol(): Protocol | null {
  try {
    return getProtocol('skyrl');
  } catch {
    return null;
  }
}

function episode(
  protocol: Protocol | null,
  dbPath: string,
  schema: SchemaInfo,
  qa: QA,
  run: (sql: string) => ExecResult,
): Episode {
  const task = { id: `tiny:${qa.question}`, question: qa.question, dbPath };
  const session = protocol
    ? protocol.create({ task, config: { ...protocol.defaults }, schema })
    : fallbackSession(qa.question, schema);
  const messages: ChatMessage[] = [...session.start()];
  const first = `<think>${qa.think}</think>\n<sql>${qa.sql}</sql>`;
  const action = session.parse(first);
  if (action.kind !== 'execute')
    throw new Error(`protocol did not read the <sql> turn as an action: ${JSON.stringify(action)}`);
  const exec = run(qa.sql);
  if (!exec.ok) throw new Error(`training SQL failed: ${qa.sql}: ${exec.error}`);
  const maxTurns = Number(protocol?.defaults.maxTurns ?? 5);
  const reply = session.respond(action, exec, maxTurns - 1);
  messages.push({ role: 'assistant', content: first }, ...reply.observations);
  const rows = exec.rowCount;
  const second =
    `<think>The query returned ${rows === 1 ? '1 row, which answers' : `${rows} rows, which answer`} the ` +
    `question.</think>\n<solution>${qa.sql}</solution>`;
  const answer = session.parse(second);
  if (answer.kind !== 'answer')
    throw new Error(`protocol did not read the <solution> turn as an answer: ${JSON.stringify(answer)}`);
  messages.push({ role: 'assistant', content: second });
  return { db: dbPath, question: qa.question, sql: qa.sql, messages, prompt: protocol ? 'skyrl' : 'fallback' };
}

function main(): void {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const out = flag('--out');
  const root = flag('--root') ?? process.cwd();
  const which = flag('--db') ?? 'bookshop';
  const split = flag('--split') ?? 'all';
  const teacher = flag('--teacher') ?? 'exact';
  if (
    !out ||
    !['bookshop', 'transit'].includes(which) ||
    !['all', 'train', 'sft', 'rl', 'heldout'].includes(split) ||
    !['exact', 'flawed'].includes(teacher)
  ) {
    throw new Error(
      'usage: episodes --out FILE [--root REPO] [--db bookshop|transit] [--split all|train|sft|rl|heldout] ' +
        '[--teacher exact|flawed]',
    );
  }
  // Only SFT's conversations are the teacher's: GRPO's prompts and the held-back questions keep the gold SQL.
  const flawed = teacher === 'flawed' && split === 'sft';
  const dbPath = join(root, 'media', 'samples', `${which}.sqlite`);
  const schema = introspectSchema(dbPath);
  const db = openReadOnly(dbPath);
  const protocol = skyrlProtocol();
  const run = (sql: string) => runStatement(db, { db: dbPath, sql });
  // The transit questions (npm run train:demo) carry their template and whether they are held back.
  // train = sft + rl: every question some stage trains on.
  const inSplit = (q: TransitQA) => split === 'all' || q.role === split || (split === 'train' && q.role !== 'heldout');
  const questions: Array<QA & Partial<Pick<TransitQA, 'template' | 'role' | 'heldout' | 'teacher'>>> =
    which === 'transit' ? transitQuestions(db).filter(inSplit) : bookshopQuestions(db);
  const lines = questions.map((qa) => {
    // A flawed teacher's conversation shows its own SQL (and executes it); `sql` stays the gold answer.
    const taught = flawed && qa.teacher ? { ...qa, sql: qa.teacher.sql, think: qa.teacher.think } : qa;
    const ep = { ...episode(protocol, dbPath, schema, taught, run), sql: qa.sql };
    if (taught !== qa) Object.assign(ep, { teacherSql: taught.sql });
    return JSON.stringify(qa.template ? { ...ep, template: qa.template, role: qa.role, heldout: qa.heldout } : ep);
  });
  db.close();
  writeFileSync(out, lines.join('\n') + '\n');
  console.error(
    `episodes: ${lines.length} conversations ` +
      `(${protocol ? 'skyrl protocol' : 'fallback prompt: skyrl protocol not in this build'}) -> ${out}`,
  );
}

main();
