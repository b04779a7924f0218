// Query history per database: newest first, a statement run again moves to the top, the last 200 kept, each database
// its own list, and the list read back from what VS Code's global state stores (JSON) as after a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HISTORY_LIMIT, QueryHistory, historyDescription } from '../../../src/extension/sqlEditor/history';
import { formatCount } from '../../../src/core/util/countText';

/** Global state as VS Code keeps it between sessions: JSON values by key. */
class JsonState {
  readonly stored = new Map<string, string>();
  keys(): readonly string[] {
    return [...this.stored.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    const raw = this.stored.get(key);
    return raw === undefined ? fallback : (JSON.parse(raw) as T);
  }
  update(key: string, value: unknown): Promise<void> {
    this.stored.set(key, JSON.stringify(value));
    return Promise.resolve();
  }
}

const entry = (sql: string, i: number) => ({
  sql,
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  ok: true,
  rows: i,
});

test(
  'newest first, a repeated statement moves to the top, the last 200 per database, ' + 'kept across a restart',
  async () => {
    const state = new JsonState();
    const history = new QueryHistory(state);
    for (let i = 0; i < HISTORY_LIMIT + 50; i++) await history.add('/w/trips.sqlite', entry(`SELECT ${i}`, i));
    await history.add('/w/clinic.sqlite', entry('SELECT name FROM doctor', 300));
    await history.add('/w/trips.sqlite', entry('SELECT 100', 400));
    const trips = history.list('/w/trips.sqlite');
    assert.equal(trips.length, HISTORY_LIMIT);
    assert.equal(HISTORY_LIMIT, 200);
    assert.deepEqual(
      trips.slice(0, 3).map((e) => e.sql),
      ['SELECT 100', 'SELECT 249', 'SELECT 248'],
    );
    assert.equal(trips.filter((e) => e.sql === 'SELECT 100').length, 1, 'no duplicates');
    assert.equal(trips.at(-1)?.sql, 'SELECT 50', 'the oldest beyond 200 are dropped');
    // A new session reads the same stored state.
    const again = new QueryHistory(state);
    assert.deepEqual(again.list('/w/trips.sqlite'), trips);
    assert.deepEqual(again.databases(), ['/w/trips.sqlite', '/w/clinic.sqlite'], 'most recently used first');
    assert.deepEqual(again.list('/w/none.sqlite'), []);
  },
);

test('a history entry writes its row count as the grid does (50,000, not 50000)', () => {
  const when = () => 'today';
  const at = '2026-01-01T00:00:00Z';
  assert.equal(historyDescription({ sql: 'SELECT 1', at, ok: true, rows: 50000 }, when), '50,000 rows · today');
  assert.equal(historyDescription({ sql: 'SELECT 1', at, ok: true, rows: 1 }, when), '1 row · today');
  assert.equal(historyDescription({ sql: 'SELECT 1', at, ok: true, rows: null }, when), '? rows · today');
  assert.equal(historyDescription({ sql: 'SELECT x', at, ok: false, rows: null }, when), 'failed · today');
  // The grid's status line uses the same formatter.
  assert.equal(formatCount(9959), '9,959');
});
