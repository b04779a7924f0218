// A small run of real agent episodes for the diagnostics tests (integration and e2e): the core loop against the
// sample workspace's clinic database, each episode's model an in-process scripted ChatModel (the only stand-in: it
// replays fixed replies and cuts them at the request's stop strings as an OpenAI-compatible server does). Two
// questions × two samples make GRPO groups (one with a right and a wrong answer, one where both are right), and one
// MTSQL-R1 episode carries E-VERIFY and M-VERIFY verdicts.
import { runEpisode } from '../../src/core/agent/loop';
import type { SqlPool } from '../../src/core/db/pool';
import type { ChatModel } from '../../src/core/models/types';
import { scriptedModel as scripted } from './scriptedModel';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';

export const Q_TOP = 'Which doctor has the most appointments?';
export const GOLD_TOP =
  'SELECT T2.name FROM appointment AS T1 JOIN doctor AS T2 ON T1.doctor_id = T2.doctor_id GROUP BY ' +
  'T2.name ORDER BY count(*) DESC LIMIT 1';
const Q_KIDS = 'How many patients were born after 2010?';
const GOLD_KIDS = 'SELECT count(*) FROM patient WHERE born > 2010';
const Q_FEES = 'What is the total fee of the cardiology appointments?';
const GOLD_FEES =
  'SELECT sum(T1.fee) FROM appointment AS T1 JOIN doctor AS T2 ON T1.doctor_id = T2.doctor_id WHERE ' +
  "T2.specialty = 'cardiology'";

/** Replies in order, cut at the request's first stop string as an OpenAI-compatible server would. */
const scriptedModel = (replies: string[]): ChatModel =>
  scripted(replies, 'scripted:diagnostics-fixture', { usage: () => ({ promptTokens: 10, completionTokens: 10 }) });

const think = (t: string) => `<think>${t}</think>\n`;
const toolCall = (name: string, code: string) =>
  `<tool_call>\n${JSON.stringify({ name, arguments: { code } })}\n</tool_call>`;

/** Runs the fixture episodes (in order: top-a, top-b, kids-a, kids-b, fees-mt) on `db` (the clinic database). */
export async function diagnosticsRun(pool: SqlPool, db: string): Promise<TrajectoryRecord[]> {
  const skyrl = (id: string, groupId: string, sample: number, question: string, gold: string, replies: string[]) =>
    runEpisode({
      id,
      groupId,
      sample,
      protocolName: 'skyrl',
      config: { maxTurns: 4 },
      pool,
      model: scriptedModel(replies),
      task: { id: groupId, question, dbPath: db, gold },
    });
  const feesSql =
    "SELECT sum(a.fee) FROM appointment a JOIN doctor d ON d.doctor_id = a.doctor_id WHERE d.specialty = 'cardiology'";
  return [
    // Right answer after one exploratory query.
    await skyrl('top-a', 'top', 0, Q_TOP, GOLD_TOP, [
      `${think('count per doctor')}<sql>SELECT doctor_id, count(*) FROM appointment GROUP BY doctor_id</sql>`,
      `${think('doctor 1 has most')}<solution>SELECT d.name FROM appointment a JOIN doctor d ON ` +
        `d.doctor_id = a.doctor_id GROUP BY d.name ORDER BY count(*) DESC LIMIT 1</solution>`,
    ]),
    // Wrong: no join, no grouping, the last doctor instead of the busiest.
    await skyrl('top-b', 'top', 1, Q_TOP, GOLD_TOP, [
      `${think('guess')}<solution>SELECT name FROM doctor ORDER BY doctor_id DESC LIMIT 1</solution>`,
    ]),
    // Both samples right.
    await skyrl('kids-a', 'kids', 0, Q_KIDS, GOLD_KIDS, [
      `${think('filter')}<solution>SELECT count(*) FROM patient WHERE born > 2010</solution>`,
    ]),
    await skyrl('kids-b', 'kids', 1, Q_KIDS, GOLD_KIDS, [
      `${think('filter')}<solution>SELECT COUNT(patient_id) FROM patient WHERE born >= 2011</solution>`,
    ]),
    // MTSQL-R1: execute, judge the result (E-VERIFY), check the memory (M-VERIFY), answer.
    await runEpisode({
      id: 'fees-mt',
      groupId: 'fees',
      sample: 0,
      protocolName: 'mtsqlr1',
      config: { maxTurns: 6 },
      pool,
      task: {
        id: 'fees',
        question: Q_FEES,
        dbPath: db,
        gold: GOLD_FEES,
        history: [
          {
            question: 'Which doctors are cardiologists?',
            sql: "SELECT name FROM doctor WHERE specialty = 'cardiology'",
          },
        ],
      },
      model: scriptedModel([
        `${think('sum the cardiology fees')}${toolCall('exec_sql', feesSql)}`,
        `${think('390 looks right')}<exec_verify>pass</exec_verify>\n${toolCall('memory_retrieve', feesSql)}`,
        `${think('consistent with the earlier cardiology question')}<memory_verify>pass</memory_verify>\n` +
          `<answer_sql>${feesSql}</answer_sql>`,
      ]),
    }),
  ];
}
