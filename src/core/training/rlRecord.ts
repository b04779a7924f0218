// One RL training record per question in verl's RL dataset schema (the columns verl's RLHFDataset and reward managers
// read; SkyRL's PromptDataset reads `prompt` and hands every other column to the environment as extras):
// data_source, prompt, ability, reward_model, extra_info, and agent_name: the verl agent loop that plays the row
// (verl/experimental/agent_loop/agent_loop.py AgentLoopWorker.generate_sequences reads the `agent_name` column).
// docs/training.md ("Data") describes every field.
import type { ChatMessage } from '../models/types';
import type { ProtocolName } from '../agent/types';
import type { DatasetName, DatasetTask } from '../datasets/types';
import type { Hardness } from '../sql/hardness';
import type { Column } from './columns';

const RL_ABILITY = 'text2sql';

interface RlExtraInfo {
  /** The question's 0-based position in the dataset file (SParC/CoSQL: among all turns). */
  index: number;
  db_id: string;
  /** Absolute path of the SQLite file when the data was made. */
  db_path: string;
  question: string;
  /** Spider hardness of the gold SQL; null when it does not parse. */
  hardness: Hardness | null;
  protocol: ProtocolName;
  /** The turn budget the prompt was built with (the rollout's maxTurns). */
  max_turns: number;
  /** BIRD's external knowledge; null when the dataset gives none. */
  evidence: string | null;
  /** SParC/CoSQL: the earlier turns with their gold SQL; null for single questions. */
  history: { question: string; sql: string }[] | null;
  /** With --curriculum-bins only: MTSQL-R1's curriculum level, 1 = easiest. */
  curriculum_level?: number;
}

export interface RlRecord {
  /** `quarry/<dataset>`: verl picks the reward function by it (data.reward_fn_key). */
  data_source: string;
  /** The protocol's opening chat messages, as the environment's reset() gives them. */
  prompt: ChatMessage[];
  ability: typeof RL_ABILITY;
  reward_model: { style: 'rule'; ground_truth: string };
  extra_info: RlExtraInfo;
  /** The verl agent loop for the row: Quarry's `quarry_agent` (trainer/quarry_trainer/verl/agent_loop.yaml), or verl's
   *  `tool_agent` for MTIR rows whose tool the chat template declares (--tools-in-template). */
  agent_name: RlAgentName;
}

type RlAgentName = 'quarry_agent' | 'tool_agent';

/** The agent loop a row of this protocol names (MTIR with the template's tool declaration: verl's tool loop). */
function rlAgentName(protocol: ProtocolName, toolsInTemplate: boolean): RlAgentName {
  return protocol === 'mtir' && toolsInTemplate ? 'tool_agent' : 'quarry_agent';
}

function rlDataSource(dataset: DatasetName): string {
  return `quarry/${dataset}`;
}

interface RlRecordInput {
  dataset: DatasetName;
  task: DatasetTask;
  prompt: ChatMessage[];
  protocol: ProtocolName;
  maxTurns: number;
  curriculumLevel?: number;
  /** The prompt leaves MTIR's tool declaration to the chat template (--tools-in-template). */
  toolsInTemplate?: boolean;
}

export function toRlRecord(input: RlRecordInput): RlRecord {
  const { task } = input;
  const conversational = input.dataset === 'sparc' || input.dataset === 'cosql';
  const extra: RlExtraInfo = {
    index: task.index,
    db_id: task.dbId,
    db_path: task.dbPath,
    question: task.question,
    hardness: task.difficulty ?? null,
    protocol: input.protocol,
    max_turns: input.maxTurns,
    evidence: task.evidence ?? null,
    history: conversational ? (task.history ?? []).map((h) => ({ question: h.question, sql: h.sql })) : null,
  };
  if (input.curriculumLevel !== undefined) extra.curriculum_level = input.curriculumLevel;
  return {
    data_source: rlDataSource(input.dataset),
    prompt: input.prompt.map((m) => ({ role: m.role, content: m.content })),
    ability: RL_ABILITY,
    reward_model: { style: 'rule', ground_truth: task.gold },
    extra_info: extra,
    agent_name: rlAgentName(input.protocol, input.toolsInTemplate === true),
  };
}

const str = (name: string, optional = false): Column => ({ name, kind: 'string', optional });
const int = (name: string): Column => ({ name, kind: 'int64' });

/** The chat message struct shared by RL prompts. */
const CHAT_MESSAGE: Column = { name: 'element', kind: 'struct', fields: [str('role'), str('content')] };

/** The Parquet columns of train.parquet; `curriculum` adds extra_info.curriculum_level. */
export function rlColumns(opts: { curriculum?: boolean } = {}): Column[] {
  const extra: Column[] = [
    int('index'),
    str('db_id'),
    str('db_path'),
    str('question'),
    str('hardness', true),
    str('protocol'),
    int('max_turns'),
    str('evidence', true),
    {
      name: 'history',
      kind: 'list',
      optional: true,
      element: { name: 'element', kind: 'struct', fields: [str('question'), str('sql')] },
    },
  ];
  if (opts.curriculum) extra.push(int('curriculum_level'));
  return [
    str('data_source'),
    { name: 'prompt', kind: 'list', element: CHAT_MESSAGE },
    str('ability'),
    { name: 'reward_model', kind: 'struct', fields: [str('style'), str('ground_truth')] },
    { name: 'extra_info', kind: 'struct', fields: extra },
    str('agent_name'),
  ];
}
