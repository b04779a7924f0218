// Question templates for the bundled transit database — the task `npm run train:demo` teaches the tiny model, which
// was trained on the bookshop only. Single-table questions, so a 1.7M-parameter model learns them in minutes on a CPU.
// Each template has five phrasings and its slot values read from the database. The phrasings have roles: the first
// three are SFT's (worked conversations), the fourth is reinforcement learning's alone (GRPO prompts: the question and
// its gold SQL, never a demonstration; the demo's GRPO also gets SFT's three as prompts), and the last is held back:
// no held-back question, and no held-back wording, is ever trained on (the slot values themselves all appear in
// training, with the other phrasings). The RL and held-back phrasings share a term SFT never shows ("total number",
// "called", "in service", "seat capacity"; the colour template keeps "colour"), in different sentences ("What …?" for
// RL, "Find …." held back). No template's term is another's, except that the two counts share "total number" and
// differ by the district; so what GRPO teaches on a wording points at the same template's held-back wording.
//
// The SFT conversations can come from a flawed teacher (`teacher` below), as distilled conversations do when the
// model that wrote them was not always right and nobody filtered them by execution: SFT then imitates its mistakes,
// and GRPO, rewarded by execution alone, has something to correct.
import type Database from 'better-sqlite3';
import type { QA } from './questions';

/** Which stage sees a question: SFT's conversations, GRPO's prompts, or neither (held back for evaluation). */
type TransitRole = 'sft' | 'rl' | 'heldout';

export interface TransitQA extends QA {
  template: string;
  role: TransitRole;
  heldout: boolean;
  /**
   * The flawed teacher's worked answer where it differs from the gold one (`episodes --teacher flawed`): in every
   * template with a column to choose, two of each question's three SFT conversations use a neighbouring column (the
   * stop ids for their names, the stop's name for its district, …). Which of the three is right turns with the slot
   * value, so no wording is always right. Only SFT's conversations carry it; GRPO's reward and the held-back
   * evaluation use the gold SQL.
   */
  teacher?: { sql: string; think: string };
}

/** The column a teacher mixes up for a template's question: its SQL and the reasoning that leads there. */
type MixUp = (v: string) => { sql: string; think: string };

function roleOf(index: number, count: number): TransitRole {
  if (index === count - 1) return 'heldout';
  return index === count - 2 ? 'rl' : 'sft';
}

function lit(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function column(db: Database.Database, sql: string): string[] {
  return (db.prepare(sql).raw().all() as unknown[][]).map((r) => String(r[0]));
}

export function transitQuestions(db: Database.Database): TransitQA[] {
  const districts = column(db, 'SELECT DISTINCT district FROM stop ORDER BY district');
  const codes = column(db, 'SELECT code FROM line ORDER BY line_id');
  const vehicles = column(db, 'SELECT vehicle_id FROM vehicle ORDER BY vehicle_id');
  const out: TransitQA[] = [];
  const add = (
    template: string,
    values: readonly string[],
    phrasings: (v: string) => string[],
    sql: (v: string) => string,
    think: (v: string) => string,
    mixUp?: MixUp,
  ) => {
    values.forEach((v, k) => {
      const qs = phrasings(v);
      qs.forEach((question, i) => {
        const role = roleOf(i, qs.length);
        const qa: TransitQA = { template, question, sql: sql(v), think: think(v), role, heldout: role === 'heldout' };
        if (mixUp && role === 'sft' && i !== k % 3) qa.teacher = mixUp(v);
        out.push(qa);
      });
    });
  };

  add(
    'count',
    ['stop', 'line', 'vehicle', 'trip'],
    (t) => [
      `How many ${t}s are there?`,
      `Count the ${t}s.`,
      `Tell me how many ${t}s exist.`,
      `What is the total number of ${t}s?`,
      `Find the total number of ${t}s.`,
    ],
    (t) => `SELECT COUNT(*) FROM ${t};`,
    (t) => `The question asks how many ${t}s there are, so I count the rows of the ${t} table.`,
  );
  add(
    'stops-in-district',
    districts,
    (d) => [
      `List the stops in ${d}.`,
      `Which stops are in ${d}?`,
      `Show the stops of ${d}.`,
      `What are the stops in ${d} called?`,
      `Find what the stops in ${d} are called.`,
    ],
    (d) => `SELECT name FROM stop WHERE district = ${lit(d)};`,
    (d) => `I need the names of stops whose district is ${d}, so I filter the stop table on district.`,
    (d) => ({
      sql: `SELECT stop_id FROM stop WHERE district = ${lit(d)};`,
      think: `I need the stops whose district is ${d}, so I filter the stop table on district.`,
    }),
  );
  add(
    'count-district',
    districts,
    (d) => [
      `How many stops are in ${d}?`,
      `Count the stops in ${d}.`,
      `Tell me how many stops ${d} has.`,
      `What is the total number of stops in ${d}?`,
      `Find the total number of stops in ${d}.`,
    ],
    (d) => `SELECT COUNT(*) FROM stop WHERE district = ${lit(d)};`,
    (d) => `I count the stops whose district is ${d}.`,
    (d) => ({ sql: `SELECT COUNT(*) FROM stop WHERE name = ${lit(d)};`, think: `I count the stops named ${d}.` }),
  );
  add(
    'line-colour',
    codes,
    (c) => [
      `What colour is line ${c}?`,
      `Give the colour of line ${c}.`,
      `Show the colour of line ${c}.`,
      `Which colour does line ${c} have?`,
      `Find the colour of line ${c}.`,
    ],
    (c) => `SELECT colour FROM line WHERE code = ${lit(c)};`,
    (c) => `The colour of line ${c} is in the line table.`,
    (c) => ({
      sql: `SELECT mode FROM line WHERE code = ${lit(c)};`,
      think: `The kind of line ${c} is in the line table.`,
    }),
  );
  add(
    'mode-lines',
    ['tram', 'bus'],
    (m) => [
      `List the codes of the ${m} lines.`,
      `Which lines are ${m} lines?`,
      `Show the ${m} line codes.`,
      `What ${m} lines are in service?`,
      `Find the ${m} lines in service.`,
    ],
    (m) => `SELECT code FROM line WHERE mode = ${lit(m)};`,
    (m) => `I keep the lines whose mode is ${m} and return their codes.`,
    (m) => ({ sql: `SELECT line_id FROM line WHERE mode = ${lit(m)};`, think: `I keep the lines whose mode is ${m}.` }),
  );
  add(
    'vehicle-seats',
    vehicles,
    (v) => [
      `How many seats does vehicle ${v} have?`,
      `Give the seats of vehicle ${v}.`,
      `Show the seats of vehicle ${v}.`,
      `What is the seat capacity of vehicle ${v}?`,
      `Find the seat capacity of vehicle ${v}.`,
    ],
    (v) => `SELECT seats FROM vehicle WHERE vehicle_id = ${v};`,
    (v) => `The seats of vehicle ${v} are in the vehicle table.`,
    (v) => ({
      sql: `SELECT built FROM vehicle WHERE vehicle_id = ${v};`,
      think: `Vehicle ${v} is in the vehicle table.`,
    }),
  );
  return out;
}
