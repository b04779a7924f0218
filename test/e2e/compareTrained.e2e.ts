// The compare view on a model before and after real training, in the browser: the bundled tiny model and a checkpoint
// of a few TRL SFT steps (quarry_trainer.train.sft on the CPU, lr high enough for a few steps to change its answers),
// each loaded with `quarry checkpoints load` (exported to ONNX, parity checked) and evaluated with `quarry checkpoints
// eval` on four questions of a small choir database (three of them trained on: the conversations are the base model's
// own prompts for them with the gold answer; one held back). "Quarry: Compare Checkpoints…" from the palette then
// shows the EX table and the disagreements (none when both models get the same questions right), and both are checked
// against a recomputation made here from the two runs' greedy trajectories: each final SQL run on the database with
// better-sqlite3 and compared with the gold's rows. The window is then reloaded and the compare panel comes back with
// the same table (its webview state, the serializer in src/extension/compare/panel.ts). Needs the project's
// Python (.venv): without it the spec skips.
// Screenshots in test-artifacts/screenshots/compare-trained-*.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type { Frame } from 'playwright-core';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import { ModelRegistry } from '../../src/core/training/modelRegistry';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

const repoRoot = join(__dirname, '..', '..', '..');
const python = join(repoRoot, '.venv', 'bin', 'python');
const noPython = existsSync(python) ? false : `no project Python at ${python} (npm run setup:python)`;
const BASE = 'tiny-base';
const TRAINED = 'tiny-sft';
const STEPS = 8;

const QUESTIONS = [
  { question: 'How many singers are there?', query: 'SELECT count(*) FROM singer', trained: true },
  { question: 'List the names of all singers.', query: 'SELECT name FROM singer', trained: true },
  { question: 'What is the average age of singers?', query: 'SELECT avg(age) FROM singer', trained: true },
  { question: 'Which singers are older than 30?', query: 'SELECT name FROM singer WHERE age > 30', trained: false },
];

let ed: Editor;
let dataset: string;
let db: string;

function quarry(args: string[]): string {
  return execFileSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), ...args], {
    cwd: ed.workspace,
    encoding: 'utf8',
    timeout: 900_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function evaluate(name: string): void {
  const dbDir = join(ed.workspace, 'eval-dbs');
  quarry(['checkpoints', 'eval', name, '--dataset', `spider:${dataset}`, '--db-dir', dbDir, '--protocol', 'skyrl']);
}

/** The greedy trajectories of a model's latest evaluation, by question text. */
function greedy(name: string): Map<string, TrajectoryRecord> {
  const ev = new ModelRegistry(ed.workspace).require(name).evaluations.at(-1)!;
  const out = new Map<string, TrajectoryRecord>();
  const file = join(ev.report, '..', 'trajectories.jsonl');
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as TrajectoryRecord;
    if (r.id.endsWith(':0')) out.set(r.task.question, r);
  }
  return out;
}

/** Whether `sql` returns the gold's rows (as a multiset; none of these golds orders its rows). */
function sameRows(conn: Database.Database, sql: string | null, gold: string): boolean {
  if (!sql) return false;
  const rows = (q: string) =>
    (conn.prepare(q).raw().all() as unknown[][]).map((r) => JSON.stringify(r.map((v) => v))).sort();
  try {
    return JSON.stringify(rows(sql)) === JSON.stringify(rows(gold));
  } catch {
    return false;
  }
}

before(async () => {
  if (noPython) return;
  ed = await openEditor({ name: 'compare-trained', viewport: { width: 1400, height: 950 } });
  // The choir database, in a Spider-style databases folder, and the four questions.
  const dbDir = join(ed.workspace, 'eval-dbs', 'choir');
  mkdirSync(dbDir, { recursive: true });
  db = join(dbDir, 'choir.sqlite');
  const conn = new Database(db);
  conn.exec('CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL)');
  const add = conn.prepare('INSERT INTO singer (name, age) VALUES (?, ?)');
  for (const [n, a] of [
    ['Ana', 25],
    ['Bo', 41],
    ['Cyd', 33],
    ['Dee', 19],
  ] as const)
    add.run(n, a);
  conn.close();
  dataset = join(ed.workspace, 'choir-dev.json');
  writeFileSync(dataset, JSON.stringify(QUESTIONS.map(({ question, query }) => ({ db_id: 'choir', question, query }))));
  // Before: the bundled tiny model, loaded and evaluated.
  quarry(['checkpoints', 'load', join(repoRoot, 'media', 'models', 'tiny-sql'), '--as', BASE, '--python', python]);
  evaluate(BASE);
  // The trained-on questions as SFT conversations: the prompt the agent gave the base model, then the gold answer.
  const prompts = greedy(BASE);
  const rows = QUESTIONS.filter((q) => q.trained).map((q) => ({
    schema: 'quarry.sft/1',
    messages: [
      ...prompts.get(q.question)!.prompt.map((m) => ({ role: m.role, content: m.content, loss: false })),
      { role: 'assistant', content: `<think>The gold.</think>\n<solution>${q.query}</solution>`, loss: true },
    ],
  }));
  const sft = join(ed.workspace, 'sft.jsonl');
  writeFileSync(sft, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const out = join(ed.workspace, 'runs', 'sft');
  execFileSync(
    python,
    [
      ...['-m', 'quarry_trainer.train.sft', '--model', join(repoRoot, 'media', 'models', 'tiny-sql')],
      ...['--data', sft, '--out', out, '--max-steps', String(STEPS), '--save-steps', String(STEPS)],
      ...['--batch-size', '3', '--lr', '5e-3', '--warmup-ratio', '0', '--scheduler', 'constant', '--cpu'],
    ],
    { cwd: ed.workspace, stdio: ['ignore', 'ignore', 'pipe'], timeout: 900_000 },
  );
  // After: the checkpoint, loaded (exported to ONNX through `quarry checkpoints load`) and evaluated.
  quarry(['checkpoints', 'load', join(out, `checkpoint-${STEPS}`), '--as', TRAINED, '--python', python]);
  evaluate(TRAINED);
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('compare-trained', () => ed);

/** What the two runs' greedy answers say, recomputed here: per model the questions it gets right. */
function recomputed(): Record<string, Set<string>> {
  const conn = new Database(db, { readonly: true });
  try {
    const right: Record<string, Set<string>> = {};
    for (const name of [BASE, TRAINED]) {
      const runs = greedy(name);
      right[name] = new Set(
        QUESTIONS.filter((q) => sameRows(conn, runs.get(q.question)?.finalSql ?? null, q.query)).map((q) => q.question),
      );
    }
    return right;
  } finally {
    conn.close();
  }
}

async function shownTable(app: Frame): Promise<Record<string, string>> {
  const table = app.locator('#ex-table');
  await table.waitFor({ timeout: 60_000 });
  const out: Record<string, string> = {};
  for (const name of [BASE, TRAINED])
    out[name] = await table.locator(`tr[data-level="all"] td[data-model="${name}"][data-k="greedy"]`).innerText();
  return out;
}

test('Compare Checkpoints…: the tiny model before and after SFT, EX and disagreements from real runs', async (t) => {
  if (noPython) return t.skip(noPython);
  const right = recomputed();
  for (const name of [BASE, TRAINED])
    for (const [q, r] of greedy(name)) t.diagnostic(`${name} · ${q} → ${r.finalSql ?? `(no SQL: ${r.end})`}`);
  t.diagnostic(`right before: ${[...right[BASE]].join(' | ') || 'none'}; after: ${[...right[TRAINED]].join(' | ')}`);
  // Two different models: the training moved the trained-on answers (on this machine, 8 steps turned the base model's
  // book queries into `SELECT count(*) FROM sing…` on the choir schema; whether they become right depends on the run).
  const [before, after] = [greedy(BASE), greedy(TRAINED)];
  assert.ok(
    QUESTIONS.some((q) => q.trained && before.get(q.question)?.finalSql !== after.get(q.question)?.finalSql),
    'the SFT steps changed what the model answers',
  );
  await ed.runCommand('Quarry: Compare Checkpoints…');
  await ed.pick(BASE);
  await ed.pick(TRAINED);
  await ed.page.keyboard.press('Enter');
  const app = await ed.webview('Compare checkpoints', 60_000);
  const pct = (n: number) => ((100 * n) / QUESTIONS.length).toFixed(1);
  assert.deepEqual(await shownTable(app), { [BASE]: pct(right[BASE].size), [TRAINED]: pct(right[TRAINED].size) });
  const shown = await app.locator('#disagreements li').allInnerTexts();
  const expected = QUESTIONS.filter((q) => right[BASE].has(q.question) !== right[TRAINED].has(q.question));
  assert.equal(shown.length, expected.length, shown.join('\n'));
  const ids = await app.locator('#disagreements li').evaluateAll((els) => els.map((e) => e.getAttribute('data-key')));
  const report = JSON.parse(
    readFileSync(new ModelRegistry(ed.workspace).require(TRAINED).evaluations.at(-1)!.report, 'utf8'),
  ) as { questions: Array<{ id: string; index: number; question?: string }> };
  const keyOf = (i: number) => {
    const q = report.questions.find((x) => x.index === i)!;
    return q.id ? `id:${q.id}` : `index:${q.index}`;
  };
  assert.deepEqual(ids.sort(), expected.map((q) => keyOf(QUESTIONS.indexOf(q))).sort());
  for (const [i, text] of shown.entries()) {
    const q = expected[i];
    const winner = right[TRAINED].has(q.question) ? TRAINED : BASE;
    assert.match(text, new RegExp(`right ${winner}; wrong ${winner === TRAINED ? BASE : TRAINED}`));
  }
  await ed.screenshot('compare-trained');
});

test('after a window reload the compare panel comes back with the same table', async (t) => {
  if (noPython) return t.skip(noPython);
  const app = await ed.webview('Compare checkpoints', 10_000);
  const before = await shownTable(app);
  await ed.reloadWindow();
  const again = await ed.webview('Compare checkpoints', 60_000);
  assert.deepEqual(await shownTable(again), before);
  await ed.screenshot('compare-trained-after-reload');
});
