// What each Quarry panel's saved webview state must hold for the host to rebuild the panel after a window reload.
// VS Code hands the state a webview last saved (setState) to the panel's WebviewPanelSerializer; the webview wrote it,
// so it is checked like a message: the host reads only the fields below, each of the right type and size, and
// restores an empty panel (saying why) when they are not. Nothing here imports `vscode`, Node or the DOM.
import { asObject, fieldProblem } from './validate';
import { QUEUE_FILTERS, type QueueFilter } from './labeling';
import type { WireCell } from '../core/db/resultExport';
import { GRID_RULES, gridMessageProblem, type GridToHost } from './grid';
import type { GridView } from './results';

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const MAX_PATH_CHARS = 4096;
const MAX_ID_CHARS = 1000;
const MAX_EXCHANGES = 200;
/** Cells of earlier query results an Ask panel's state may bring back (display only). */
const MAX_RESTORED_CELLS = 2_000_000;

const fail = <T>(error: string): Parsed<T> => ({ ok: false, error });

function isAbsolutePath(p: string): boolean {
  return /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p);
}

/** Why `p` is not a file path the host will open, or null. */
function pathProblem(p: string, what: string): string | null {
  if (p.length > MAX_PATH_CHARS) return `${what} is longer than ${MAX_PATH_CHARS} characters`;
  if (p.includes('\0')) return `${what} contains a NUL character`;
  if (!isAbsolutePath(p)) return `${what} is not an absolute path: ${JSON.stringify(p.slice(0, 200))}`;
  return null;
}

function idProblem(id: string, what: string): string | null {
  if (id === '') return `${what} is empty`;
  return id.length > MAX_ID_CHARS ? `${what} is longer than ${MAX_ID_CHARS} characters` : null;
}

/** The replay panel: the file, the trajectory that was open and its turn (the app restores its filter and view). */
export interface ReplayRestore {
  file: string | null;
  selectedId: string | null;
  turn: number;
}

export function replayRestore(raw: unknown): Parsed<ReplayRestore> {
  if (raw === undefined || raw === null) return { ok: true, value: { file: null, selectedId: null, turn: 0 } };
  const o = asObject(raw);
  if (!o) return fail('the replay state is not an object');
  const problem = fieldProblem(o, { file: 'string?', selectedId: 'string?', turn: 'number?' }, 'replay state', true);
  if (problem) return fail(problem);
  const file = (o.file as string | undefined) ?? null;
  const selectedId = (o.selectedId as string | undefined) ?? null;
  const turn = (o.turn as number | undefined) ?? 0;
  const bad =
    (file !== null ? pathProblem(file, 'replay state: file') : null) ??
    (selectedId !== null ? idProblem(selectedId, 'replay state: selectedId') : null) ??
    (Number.isInteger(turn) && turn >= 0 ? null : `replay state: turn must be a whole number ≥ 0, is ${turn}`);
  return bad ? fail(bad) : { ok: true, value: { file, selectedId, turn } };
}

/** The diagnostics panel: the file, the reward panel chosen, and the trajectory shown (with or without its run). */
export interface DiagnosticsRestore {
  file: string | null;
  panel: string | null;
  trajectoryId: string | null;
  withRun: boolean;
}

export function diagnosticsRestore(raw: unknown): Parsed<DiagnosticsRestore> {
  if (raw === undefined || raw === null) {
    return { ok: true, value: { file: null, panel: null, trajectoryId: null, withRun: false } };
  }
  const o = asObject(raw);
  if (!o) return fail('the diagnostics state is not an object');
  const problem = fieldProblem(
    o,
    { selected: 'string?', source: 'object?', view: 'string?', trajectory: 'object?', hasRun: 'boolean?' },
    'diagnostics state',
    true,
  );
  if (problem) return fail(problem);
  const source = asObject(o.source);
  const sourceProblem = source ? fieldProblem(source, { file: 'string' }, 'diagnostics state: source') : null;
  if (sourceProblem) return fail(sourceProblem);
  const file = (source?.file as string | undefined) ?? null;
  const view = (o.view as string | undefined) ?? 'empty';
  if (!['empty', 'run', 'trajectory'].includes(view)) {
    return fail(`diagnostics state: unknown view ${JSON.stringify(view.slice(0, 40))}`);
  }
  const trajectory = view === 'trajectory' ? asObject(o.trajectory) : null;
  const trajectoryProblem = trajectory && fieldProblem(trajectory, { id: 'string' }, 'diagnostics state: trajectory');
  if (trajectoryProblem) return fail(trajectoryProblem);
  const trajectoryId = (trajectory?.id as string | undefined) ?? null;
  const panel = (o.selected as string | undefined) ?? null;
  const bad =
    (file !== null ? pathProblem(file, 'diagnostics state: source file') : null) ??
    (trajectoryId !== null ? idProblem(trajectoryId, 'diagnostics state: trajectory id') : null) ??
    (panel !== null && panel.length > MAX_PATH_CHARS ? 'diagnostics state: the panel name is too long' : null);
  if (bad) return fail(bad);
  return { ok: true, value: { file: view === 'empty' ? null : file, panel, trajectoryId, withRun: o.hasRun === true } };
}

/** The labeling panel: the file, the trajectory under review and the queue's filter. */
export interface LabelRestore {
  file: string | null;
  id: string | null;
  filter: QueueFilter | null;
}

export function labelRestore(raw: unknown): Parsed<LabelRestore> {
  if (raw === undefined || raw === null) return { ok: true, value: { file: null, id: null, filter: null } };
  const o = asObject(raw);
  if (!o) return fail('the labeling state is not an object');
  const problem = fieldProblem(o, { file: 'string?', id: 'string?', filter: 'string?' }, 'labeling state', true);
  if (problem) return fail(problem);
  const file = (o.file as string | undefined) ?? null;
  const id = (o.id as string | undefined) ?? null;
  const filter = (o.filter as string | undefined) ?? null;
  const bad =
    (file !== null ? pathProblem(file, 'labeling state: file') : null) ??
    (id !== null ? idProblem(id, 'labeling state: id') : null) ??
    (filter !== null && !QUEUE_FILTERS.some((f) => f.value === filter)
      ? `labeling state: unknown filter ${JSON.stringify(filter.slice(0, 40))}`
      : null);
  return bad ? fail(bad) : { ok: true, value: { file, id, filter: filter as QueueFilter | null } };
}

/** A table preview: which table of which database. */
export interface PreviewRestore {
  path: string;
  table: string;
}

export function previewRestore(raw: unknown): Parsed<PreviewRestore> {
  const o = asObject(raw);
  if (!o) return fail('the preview state is not an object');
  const problem = fieldProblem(o, { path: 'string', table: 'string' }, 'preview state');
  if (problem) return fail(problem);
  const path = o.path as string,
    table = o.table as string;
  const bad = pathProblem(path, 'preview state: path') ?? idProblem(table, 'preview state: table');
  return bad ? fail(bad) : { ok: true, value: { path, table } };
}

/** The Query Results panel: the statement, its database, and the page it showed (sort and filters included). */
export interface ResultsRestore {
  path: string;
  sql: string;
  view: GridView | null;
}

/** Longest statement a Query Results state may bring back (a SQL document's statement, not a data dump). */
const MAX_RESTORED_SQL_CHARS = 1_000_000;

export function resultsRestore(raw: unknown): Parsed<ResultsRestore> {
  const o = asObject(raw);
  if (!o) return fail('the Query Results state is not an object');
  const problem = fieldProblem(o, { path: 'string', sql: 'string', view: 'object?' }, 'Query Results state', true);
  if (problem) return fail(problem);
  const path = o.path as string,
    sql = o.sql as string;
  const bad =
    pathProblem(path, 'Query Results state: path') ??
    (sql.trim() === '' ? 'Query Results state: the statement is empty' : null) ??
    (sql.length > MAX_RESTORED_SQL_CHARS
      ? `Query Results state: the statement is over ${MAX_RESTORED_SQL_CHARS} characters`
      : null);
  if (bad) return fail(bad);
  const viewRaw = asObject(o.view);
  if (!viewRaw) return { ok: true, value: { path, sql, view: null } };
  // The page shown is checked as the page request it stands for.
  const asked = { ...viewRaw, type: 'page' };
  const viewProblem =
    fieldProblem(asked, GRID_RULES.page, 'Query Results state: view') ?? gridMessageProblem(asked as GridToHost);
  if (viewProblem) return fail(viewProblem);
  const v = asked as Extract<GridToHost, { type: 'page' }>;
  const view: GridView = {
    offset: v.offset,
    limit: v.limit,
    ...(v.sortColumn === undefined ? {} : { sortColumn: v.sortColumn, descending: v.descending === true }),
    filters: v.filters.map((f) => ({ column: f.column, text: f.text })),
  };
  return { ok: true, value: { path, sql, view } };
}

/** Rows a restored Ask turn shows again (display only: what the host acts on comes from the trajectory store). */
export interface ShownRows {
  index: number;
  columns: string[];
  rowCount: number;
  rows: WireCell[][];
}

/** The Ask panel: the database and, per question, its trajectory id, whether its result was shown, and turn rows. */
export interface AskRestore {
  db: { path: string; label: string } | null;
  exchanges: { id: string; hadResult: boolean; rows: ShownRows[] }[];
  /** The conversations kept in the panel's list (another database, New conversation), oldest first. */
  conversations: { db: { path: string; label: string }; exchanges: { id: string; hadResult: boolean }[] }[];
}

/** The database of a saved Ask state or of one of its kept conversations, checked. */
function savedDb(raw: unknown, what: string): Parsed<{ path: string; label: string }> {
  const o = asObject(raw);
  if (!o) return fail(`${what}: db is not an object`);
  const problem =
    fieldProblem(o, { path: 'string', label: 'string' }, what) ?? pathProblem(o.path as string, `${what} path`);
  return problem
    ? fail(problem)
    : { ok: true, value: { path: o.path as string, label: (o.label as string).slice(0, 1000) } };
}

/** The kept conversations of a saved Ask state: those without question ids (an older state) are left out. */
function keptConversations(raw: unknown, budget: { exchanges: number }): Parsed<AskRestore['conversations']> {
  if (raw === undefined || raw === null) return { ok: true, value: [] };
  if (!Array.isArray(raw)) return fail('Ask state: conversations is not a list');
  const out: AskRestore['conversations'] = [];
  for (const [i, c] of raw.entries()) {
    const what = `Ask state: conversation ${i + 1}`;
    const o = asObject(c);
    if (!o) return fail(`${what} is not an object`);
    if (o.exchanges === undefined) continue;
    if (!Array.isArray(o.exchanges)) return fail(`${what}: exchanges is not a list`);
    const db = savedDb(o.db, `${what} db`);
    if (!db.ok) return db;
    const exchanges: { id: string; hadResult: boolean }[] = [];
    for (const [j, x] of o.exchanges.entries()) {
      const e = asObject(x);
      const bad =
        !e || typeof e.id !== 'string'
          ? `${what}: question ${j + 1} has no trajectory id`
          : idProblem(e.id, `${what}: question ${j + 1} id`);
      if (bad) return fail(bad);
      exchanges.push({ id: e!.id as string, hadResult: e!.hadResult === true });
    }
    budget.exchanges -= exchanges.length;
    if (budget.exchanges < 0) return fail(`Ask state: more than ${MAX_EXCHANGES} questions`);
    if (exchanges.length) out.push({ db: db.value, exchanges });
  }
  return { ok: true, value: out };
}

const isCell = (c: unknown): boolean =>
  c === null || typeof c === 'string' || (typeof c === 'number' && Number.isFinite(c));

/** The rows each executed turn of a saved exchange showed, where they are well-formed; the rest are left out. */
function shownRows(turns: unknown, budget: { cells: number }): ShownRows[] {
  if (!Array.isArray(turns)) return [];
  const out: ShownRows[] = [];
  for (const t of turns) {
    const turn = asObject(t);
    const exec = asObject(turn?.exec);
    if (!turn || !exec || typeof turn.index !== 'number' || !Number.isInteger(turn.index)) continue;
    const { columns, rows, rowCount } = exec;
    if (!Array.isArray(columns) || !columns.every((c) => typeof c === 'string')) continue;
    if (typeof rowCount !== 'number' || !Array.isArray(rows) || rows.length > rowCount) continue;
    const cells = rows.reduce((n: number, r: unknown) => n + (Array.isArray(r) ? r.length : 0), 0);
    if (cells > budget.cells) continue;
    if (!rows.every((r) => Array.isArray(r) && r.length === columns.length && r.every(isCell))) continue;
    budget.cells -= cells;
    out.push({ index: turn.index, columns: columns as string[], rowCount, rows: rows as WireCell[][] });
  }
  return out;
}

export function askRestore(raw: unknown): Parsed<AskRestore> {
  if (raw === undefined || raw === null) return { ok: true, value: { db: null, exchanges: [], conversations: [] } };
  const saved = asObject(raw);
  if (!saved) return fail('the Ask state is not an object');
  const state = asObject(saved.state);
  if (!state) return fail('Ask state: missing state');
  const problem = fieldProblem(
    state,
    { db: 'object?', exchanges: 'array?', conversations: 'array?' },
    'Ask state',
    true,
  );
  if (problem) return fail(problem);
  let db: AskRestore['db'] = null;
  if (state.db !== undefined && state.db !== null) {
    const checked = savedDb(state.db, 'Ask state: db');
    if (!checked.ok) return checked;
    db = checked.value;
  }
  const list = (state.exchanges as unknown[] | undefined) ?? [];
  if (list.length > MAX_EXCHANGES) return fail(`Ask state: more than ${MAX_EXCHANGES} questions`);
  const budget = { cells: MAX_RESTORED_CELLS };
  const exchanges: AskRestore['exchanges'] = [];
  for (const [i, x] of list.entries()) {
    const e = asObject(x);
    if (!e || typeof e.id !== 'string') return fail(`Ask state: question ${i + 1} has no trajectory id`);
    const bad = idProblem(e.id, `Ask state: question ${i + 1} id`);
    if (bad) return fail(bad);
    exchanges.push({ id: e.id, hadResult: asObject(e.result) !== null, rows: shownRows(e.turns, budget) });
  }
  if (!db && exchanges.length) return fail('Ask state: questions without a database');
  const conversations = keptConversations(state.conversations, { exchanges: MAX_EXCHANGES - exchanges.length });
  if (!conversations.ok) return conversations;
  return { ok: true, value: { db, exchanges, conversations: conversations.value } };
}
