// What the host accepts from a panel's saved webview state after a window reload (src/protocol/restore.ts): the states
// the apps write pass and give the fields the host uses; nothing saved restores an empty panel; wrong types, relative
// or oversized paths, unknown views and filters are refused with a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  askRestore,
  diagnosticsRestore,
  labelRestore,
  previewRestore,
  replayRestore,
  resultsRestore,
  type Parsed,
} from '../../../src/protocol/restore';

function error<T>(p: Parsed<T>): string {
  assert.equal(p.ok, false, 'refused');
  return p.ok ? '' : p.error;
}

function value<T>(p: Parsed<T>): T {
  assert.ok(p.ok, p.ok ? '' : p.error);
  return p.value;
}

test('replay: file, selected trajectory and turn from the app state; empty without one; bad fields refused', () => {
  const app = {
    file: '/w/runs/a.jsonl',
    filter: { verdict: 'correct' },
    selectedId: 'top-2',
    markedIds: ['a'],
    view: 'detail',
    turn: 2,
    scrollTop: 48,
  };
  assert.deepEqual(value(replayRestore(app)), { file: '/w/runs/a.jsonl', selectedId: 'top-2', turn: 2 });
  assert.deepEqual(value(replayRestore({ ...app, file: null, selectedId: null })), {
    file: null,
    selectedId: null,
    turn: 2,
  });
  assert.deepEqual(value(replayRestore(undefined)), { file: null, selectedId: null, turn: 0 });
  assert.match(error(replayRestore('x')), /not an object/);
  assert.match(error(replayRestore({ ...app, file: 42 })), /file should be string, is number/);
  assert.match(error(replayRestore({ ...app, file: 'runs/a.jsonl' })), /not an absolute path/);
  assert.match(error(replayRestore({ ...app, file: `/${'a'.repeat(5000)}` })), /longer than 4096/);
  assert.match(error(replayRestore({ ...app, turn: -1 })), /turn must be a whole number/);
  assert.match(error(replayRestore({ ...app, selectedId: '' })), /selectedId is empty/);
  assert.equal(
    value(replayRestore({ ...app, file: 'C:\\runs\\a.jsonl' })).file,
    'C:\\runs\\a.jsonl',
    'a Windows path is absolute too',
  );
});

test('diagnostics: file, panel, trajectory (and whether its run came first); the empty view restores no file', () => {
  const base = {
    panels: [],
    selected: 'skyrl',
    source: { file: '/w/a.jsonl', label: 'a.jsonl', records: 3, invalid: [] },
    run: null,
    trajectory: null,
    hasRun: false,
    filter: '',
    help: false,
  };
  assert.deepEqual(value(diagnosticsRestore({ ...base, view: 'run', hasRun: true })), {
    file: '/w/a.jsonl',
    panel: 'skyrl',
    trajectoryId: null,
    withRun: true,
  });
  assert.deepEqual(value(diagnosticsRestore({ ...base, view: 'trajectory', trajectory: { id: 't1', terms: [] } })), {
    file: '/w/a.jsonl',
    panel: 'skyrl',
    trajectoryId: 't1',
    withRun: false,
  });
  assert.equal(value(diagnosticsRestore({ ...base, view: 'empty' })).file, null);
  assert.deepEqual(value(diagnosticsRestore(null)), { file: null, panel: null, trajectoryId: null, withRun: false });
  assert.match(error(diagnosticsRestore({ ...base, view: 'charts' })), /unknown view "charts"/);
  assert.match(
    error(diagnosticsRestore({ ...base, view: 'run', source: { file: 3 } })),
    /source: file should be string/,
  );
  assert.match(
    error(diagnosticsRestore({ ...base, view: 'trajectory', trajectory: { id: 7 } })),
    /trajectory: id should be string/,
  );
  assert.match(
    error(diagnosticsRestore({ ...base, view: 'run', source: { file: 'a.jsonl' } })),
    /not an absolute path/,
  );
});

test('labeling: file, trajectory and queue filter; states from before the file was kept restore nothing', () => {
  const app = { file: '/w/asked.jsonl', filter: 'unlabeled', position: 3, id: 'abc', draft: null, showHelp: false };
  assert.deepEqual(value(labelRestore(app)), { file: '/w/asked.jsonl', id: 'abc', filter: 'unlabeled' });
  assert.deepEqual(value(labelRestore({ position: 0, id: null, draft: null, showHelp: false })), {
    file: null,
    id: null,
    filter: null,
  });
  assert.match(error(labelRestore({ ...app, filter: 'everything' })), /unknown filter "everything"/);
  assert.match(error(labelRestore({ ...app, id: 5 })), /id should be string/);
});

test('preview: database path and table are both needed', () => {
  assert.deepEqual(value(previewRestore({ path: '/w/data/clinic.sqlite', table: 'doctor' })), {
    path: '/w/data/clinic.sqlite',
    table: 'doctor',
  });
  assert.match(error(previewRestore(undefined)), /not an object/);
  assert.match(error(previewRestore({ path: '/w/data/clinic.sqlite' })), /missing table/);
  assert.match(error(previewRestore({ path: '/w/data/clinic.sqlite', table: '' })), /table is empty/);
  assert.match(error(previewRestore({ path: 'clinic.sqlite', table: 'doctor' })), /not an absolute path/);
});

test('query results: the statement, its database and the page shown; a bad page or path is refused', () => {
  const app = {
    path: '/w/data/trips.sqlite',
    sql: 'SELECT * FROM trip',
    view: { offset: 400, limit: 200, sortColumn: 1, descending: true, filters: [{ column: 2, text: 'station 7' }] },
  };
  assert.deepEqual(value(resultsRestore(app)), app);
  assert.deepEqual(value(resultsRestore({ path: app.path, sql: app.sql })), { ...app, view: null });
  assert.deepEqual(value(resultsRestore({ ...app, view: { offset: 0, limit: 200, filters: [] } })).view, {
    offset: 0,
    limit: 200,
    filters: [],
  });
  assert.match(error(resultsRestore(undefined)), /not an object/);
  assert.match(error(resultsRestore({ ...app, path: 'trips.sqlite' })), /not an absolute path/);
  assert.match(error(resultsRestore({ ...app, sql: '  ' })), /statement is empty/);
  assert.match(error(resultsRestore({ ...app, sql: 7 })), /sql should be string/);
  assert.match(error(resultsRestore({ ...app, view: { ...app.view, offset: -1 } })), /offset/);
  assert.match(error(resultsRestore({ ...app, view: { ...app.view, limit: 10_000 } })), /limit/);
  assert.match(error(resultsRestore({ ...app, view: { ...app.view, filters: [{ column: 'x' }] } })), /filter/);
  assert.match(error(resultsRestore({ ...app, view: { offset: 0, limit: 5 } })), /missing filters/);
});

test("ask: the database and each question's id; malformed rows are dropped, not trusted", () => {
  const exec = {
    ok: true,
    errorClass: null,
    error: null,
    columns: ['a', 'b'],
    rows: [
      [1, 'x'],
      [null, 2.5],
    ],
    rowCount: 2,
    truncated: false,
    ms: 1,
  };
  const turn = (index: number, e: unknown) => ({
    index,
    finalCall: false,
    text: '',
    parsed: true,
    kind: 'execute',
    sql: 'SELECT 1',
    thought: null,
    mdp: [],
    problems: [],
    exec: e,
    observation: null,
  });
  const x = (id: string, turns: unknown[], result: unknown = null) => ({
    id,
    question: 'q',
    protocol: 'skyrl',
    budget: 5,
    turns,
    running: false,
    end: 'answer',
    finalSql: 'SELECT 1',
    error: null,
    result,
    resultRunning: false,
    savedTo: null,
    totalMs: 3,
  });
  const state = {
    db: { path: '/w/data/clinic.sqlite', label: 'data/clinic.sqlite' },
    model: 'm',
    exchanges: [
      x(
        'one',
        [turn(0, exec), turn(1, { ...exec, rows: [[{ evil: 1 }, 'x']] }), turn(2, { ...exec, rows: [[1]] })],
        exec,
      ),
      x('two', [turn(0, null)]),
    ],
  };
  const v = value(askRestore({ state, draft: '', open: [] }));
  assert.deepEqual(v.db, { path: '/w/data/clinic.sqlite', label: 'data/clinic.sqlite' });
  assert.deepEqual(
    v.exchanges.map((e) => [e.id, e.hadResult, e.rows.map((r) => r.index)]),
    [
      ['one', true, [0]],
      ['two', false, []],
    ],
  );
  assert.deepEqual(v.exchanges[0].rows[0].rows, [
    [1, 'x'],
    [null, 2.5],
  ]);
  assert.deepEqual(value(askRestore({ state: { db: null, exchanges: [], model: '' } })), {
    db: null,
    exchanges: [],
    conversations: [],
  });
  assert.deepEqual(value(askRestore(undefined)), { db: null, exchanges: [], conversations: [] });
  // The kept conversations come back by their question ids; a summary without ids (an older state) is left out.
  const kept = (path: string, exchanges?: unknown) => ({
    db: { path, label: 'l' },
    first: 'q',
    questions: 1,
    exchanges,
  });
  const withKept = {
    ...state,
    conversations: [
      kept('/w/data/orchard.sqlite', [{ id: 'k1', hadResult: true }, { id: 'k2' }]),
      kept('/w/data/old.sqlite'),
    ],
  };
  assert.deepEqual(value(askRestore({ state: withKept })).conversations, [
    {
      db: { path: '/w/data/orchard.sqlite', label: 'l' },
      exchanges: [
        { id: 'k1', hadResult: true },
        { id: 'k2', hadResult: false },
      ],
    },
  ]);
  assert.match(
    error(askRestore({ state: { ...state, conversations: [kept('orchard.sqlite', [{ id: 'k' }])] } })),
    /conversation 1 db path is not an absolute path/,
  );
  assert.match(
    error(askRestore({ state: { ...state, conversations: [kept('/w/o.sqlite', [{ id: '' }])] } })),
    /conversation 1: question 1 id is empty/,
  );
  const many = Array.from({ length: 199 }, (_, i) => ({ id: `k${i}` }));
  assert.match(
    error(askRestore({ state: { ...state, conversations: [kept('/w/o.sqlite', many)] } })),
    /more than 200 questions/,
    'the list counts toward the same cap',
  );
  assert.match(error(askRestore({ draft: '' })), /missing state/);
  assert.match(
    error(askRestore({ state: { ...state, db: { path: 'clinic.sqlite', label: 'c' } } })),
    /db path is not an absolute path/,
  );
  assert.match(
    error(askRestore({ state: { ...state, exchanges: [{ question: 'q' }] } })),
    /question 1 has no trajectory id/,
  );
  assert.match(error(askRestore({ state: { ...state, db: null } })), /questions without a database/);
  assert.match(
    error(askRestore({ state: { ...state, exchanges: Array.from({ length: 201 }, (_, i) => x(`x${i}`, [])) } })),
    /more than 200 questions/,
  );
});
