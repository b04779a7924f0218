// Question templates for the bundled transit database — the task `npm run train:demo` teaches the tiny model, which
// was trained on the bookshop only. Single-table questions: a 1.7M-parameter model learns them in minutes on a CPU.
// Each template has several phrasings and slot values read from the database. The last phrasing of every template
// and a few slot values are held back: a held-back question uses a held-back phrasing or a held-back value (or both),
// so no held-back question, and no held-back wording, is ever trained on.
import type Database from 'better-sqlite3';
import type { QA } from './questions';

export interface TransitQA extends QA {
  template: string;
  heldout: boolean;
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
  // Held-back slot values: the second-to-last of each list (kept out of every training phrasing).
  const held = (values: readonly string[]) => new Set(values.length > 2 ? [values[values.length - 2]] : []);
  const add = (
    template: string,
    values: readonly string[],
    phrasings: (v: string) => string[],
    sql: (v: string) => string,
    think: (v: string) => string,
  ) => {
    const heldValues = held(values);
    for (const v of values) {
      const qs = phrasings(v);
      qs.forEach((question, i) => {
        const heldout = i === qs.length - 1 || heldValues.has(v);
        out.push({ template, question, sql: sql(v), think: think(v), heldout });
      });
    }
  };

  add(
    'count',
    ['stop', 'line', 'vehicle', 'trip'],
    (t) => [
      `How many ${t}s are there?`,
      `Count the ${t}s.`,
      `What is the number of ${t}s?`,
      `Give the total of ${t}s.`,
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
      `What are the names of the stops in ${d}?`,
      `Name the stops located in ${d}.`,
    ],
    (d) => `SELECT name FROM stop WHERE district = ${lit(d)};`,
    (d) => `I need the names of stops whose district is ${d}, so I filter the stop table on district.`,
  );
  add(
    'count-district',
    districts,
    (d) => [`How many stops are in ${d}?`, `Count the stops in ${d}.`, `What is the number of stops in ${d}?`],
    (d) => `SELECT COUNT(*) FROM stop WHERE district = ${lit(d)};`,
    (d) => `I count the stops whose district is ${d}.`,
  );
  add(
    'line-colour',
    codes,
    (c) => [`What colour is line ${c}?`, `Give the colour of line ${c}.`, `Which colour does line ${c} have?`],
    (c) => `SELECT colour FROM line WHERE code = ${lit(c)};`,
    (c) => `The colour of line ${c} is in the line table.`,
  );
  add(
    'mode-lines',
    ['tram', 'bus'],
    (m) => [`List the codes of the ${m} lines.`, `Which lines are ${m} lines?`, `What are the ${m} line codes?`],
    (m) => `SELECT code FROM line WHERE mode = ${lit(m)};`,
    (m) => `I keep the lines whose mode is ${m} and return their codes.`,
  );
  add(
    'vehicle-seats',
    vehicles,
    (v) => [
      `How many seats does vehicle ${v} have?`,
      `Give the seats of vehicle ${v}.`,
      `What is the seat count of vehicle ${v}?`,
    ],
    (v) => `SELECT seats FROM vehicle WHERE vehicle_id = ${v};`,
    (v) => `The seats of vehicle ${v} are in the vehicle table.`,
  );
  return out;
}
