// A language-model tool call as a trajectory record, so Replay and Labeling show what an editor agent (Copilot's
// agent mode, any chat participant) did with Quarry's tools. Each call is one step: a one-turn record whose assistant
// text is the tool call, whose observation is what the tool returned, and whose group is the agent-mode session
// (`groupId` = session id, `sample` = the step's index in it). A run's statement is its final SQL, so Labeling can
// judge it; a plan's statement is the action's SQL with no execution; a listing or schema look-up is a 'memory' turn.
// Pure: sessions are told apart by sessions.ts, the store is written by tools.ts.
import { createHash, randomUUID } from 'node:crypto';
import { TRAJECTORY_SCHEMA, type TrajectoryRecord, type TurnExec } from '../../core/trajectories/types';
import type { ExecResult } from '../../core/db/types';
import type { LmToolName } from './toolCalls';

/** `meta.source` of these records. */
const LM_TOOL_SOURCE = 'vscode-lm-tool';
/** sha256 of no bytes: the hash a call about no database (listing them, refused input) records. */
const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

interface ToolStep {
  tool: LmToolName;
  input: unknown;
  session: string;
  /** 0-based index of this call in its session. */
  step: number;
  startedAt: Date;
  ms: number;
  /** The database the call was about, or null (the record then names `workspace`, the folder whose files it saw). */
  db: { path: string; sha256: string } | null;
  workspace?: string;
  /** The user's question the agent gave with the call, when it gave one. */
  question?: string;
  /** The statement run, or planned (a plan has no `exec`: nothing ran). */
  sql?: string;
  exec?: ExecResult;
  /** What the tool returned to the model. */
  text: string;
  /** Set when the call failed before returning a result (bad input, cancelled). */
  error?: string;
}

function turnExec(r: ExecResult): TurnExec {
  return {
    ok: r.ok,
    errorClass: r.errorClass,
    error: r.error,
    columns: r.columns,
    rowCount: r.rowCount,
    truncated: r.truncated,
    ms: r.ms,
  };
}

export function toolStepRecord(s: ToolStep): TrajectoryRecord {
  const ran = s.exec !== undefined && s.sql !== undefined;
  const envMs = Math.max(0, s.ms);
  return {
    schema: TRAJECTORY_SCHEMA,
    id: `lm-${randomUUID()}`,
    groupId: s.session,
    sample: s.step,
    createdAt: s.startedAt.toISOString(),
    task: {
      id: null,
      question: s.question ?? `(agent mode: ${s.tool})`,
      db: s.db
        ? { path: s.db.path, id: null, sha256: s.db.sha256 }
        : { path: s.workspace ?? '(no database)', id: null, sha256: EMPTY_SHA256 },
      evidence: null,
      history: [],
      gold: null,
      difficulty: null,
    },
    // The observation is SkyRL-SQL's (pandas rows, Python's error text); the model is the editor's agent, unknown here.
    protocol: { name: 'skyrl', config: { maxTurns: 1, tool: s.tool }, budget: 1 },
    model: { spec: 'vscode-agent-mode', sampling: {} },
    prompt: [],
    turns: [
      {
        index: 0,
        assistant: JSON.stringify({ tool: s.tool, input: s.input }),
        action: {
          // A call that handed no SQL to the sandbox (listing, a schema) is a look-up, recorded as 'memory'.
          kind: s.error ? 'invalid' : s.sql !== undefined ? 'execute' : 'memory',
          sql: s.sql ?? null,
          thought: null,
          mdp: ran ? ['EXECUTE'] : [],
          problems: s.error ? [s.error] : [],
        },
        observations: [{ role: 'tool', content: s.error ?? s.text }],
        exec: ran && s.exec ? turnExec(s.exec) : null,
        finishReason: 'stop',
        usage: { promptTokens: 0, completionTokens: 0 },
        timings: { modelMs: 0, envMs },
      },
    ],
    finalSql: ran ? (s.sql ?? null) : null,
    end: s.error ? 'invalid' : ran ? 'answer' : 'budget',
    error: null,
    usage: { promptTokens: 0, completionTokens: 0 },
    timings: { totalMs: envMs, modelMs: 0, envMs },
    meta: { source: LM_TOOL_SOURCE, tool: s.tool, session: s.session, step: s.step },
  };
}
