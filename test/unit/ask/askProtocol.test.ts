// The Ask panel's protocol without a browser: every host-bound message is checked (types, then the rules the types
// cannot say), and a real episode's events, mapped and batched as the host does, rebuild the conversation through the
// shared reducer — the same state on the host and in the app, JSON-safe for postMessage.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode } from '../../../src/core/agent/loop';
import { checkMessage } from '../../../src/protocol/validate';
import {
  ASK_RULES,
  askMessageProblem,
  MAX_QUESTION_CHARS,
  type ExchangeEvent,
  type ToHost,
} from '../../../src/protocol/ask';
import { applyEvent, emptyState, isRunning, turnsUsed } from '../../../src/protocol/askState';
import { exchangeEvent, TextBatcher } from '../../../src/extension/ask/events';
import { buildDb } from '../../helpers/fixtures';
import { scriptedModel } from '../agent/envSupport';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const db = buildDb('bookshop');

function verdict(raw: unknown, exchanges = 2): string | null {
  const c = checkMessage<ToHost>(raw, ASK_RULES);
  return c.ok ? askMessageProblem(c.message, exchanges) : c.error;
}

test('host-bound messages: well-formed ones pass; wrong types, unknown kinds, missing fields are refused', () => {
  for (const ok of [
    { type: 'ready' },
    { type: 'ask', question: 'How many books?' },
    { type: 'stop' },
    { type: 'run', exchange: 0 },
    { type: 'openSql', exchange: 1 },
    { type: 'insertSql', exchange: 1 },
    { type: 'copySql', exchange: 0 },
    { type: 'saveTrajectory', exchange: 0 },
    { type: 'saveTrajectoryAs', exchange: 1 },
    { type: 'label', exchange: 0 },
    { type: 'grid', exchange: 0, message: { type: 'export', format: 'csv' } },
    { type: 'grid', exchange: 1, message: { type: 'page', offset: 200, limit: 200, sortColumn: 1, filters: [] } },
    { type: 'copyText', text: 'a\tb\n' },
    { type: 'changeDb' },
    { type: 'newConversation' },
  ])
    assert.equal(verdict(ok), null, JSON.stringify(ok));
  assert.match(verdict(null)!, /not an object/);
  assert.match(verdict([{ type: 'stop' }])!, /not an object/);
  assert.match(verdict({ type: 'deleteEverything' })!, /unknown message type "deleteEverything"/);
  assert.match(verdict({ type: 'toString' })!, /unknown message type/, 'no inherited keys');
  assert.match(verdict({ type: 'run' })!, /run: missing exchange/);
  assert.match(verdict({ type: 'run', exchange: '0' })!, /exchange should be number, is string/);
  assert.match(verdict({ type: 'run', exchange: Number.NaN })!, /exchange should be number/);
  assert.match(verdict({ type: 'ask', question: 42 })!, /question should be string/);
});

test('host-bound messages: exchange indices must exist, questions must be real, formats known, copies bounded', () => {
  assert.match(verdict({ type: 'run', exchange: 2 }, 2)!, /exchange 2 does not exist \(there are 2\)/);
  assert.match(verdict({ type: 'label', exchange: -1 })!, /does not exist/);
  assert.match(verdict({ type: 'openSql', exchange: 0.5 })!, /does not exist/);
  assert.match(verdict({ type: 'run', exchange: 0 }, 0)!, /does not exist \(there are 0\)/);
  assert.match(verdict({ type: 'ask', question: '   ' })!, /the question is empty/);
  assert.match(verdict({ type: 'ask', question: 'x'.repeat(MAX_QUESTION_CHARS + 1) })!, /longer than 4000/);
  // A grid message is checked as the paged grid's own (src/protocol/grid.ts) before the host pages anything.
  const grid = (message: unknown) => verdict({ type: 'grid', exchange: 0, message });
  assert.match(grid({ type: 'export', format: 'xlsx' })!, /grid: export: unknown format "xlsx"/);
  assert.match(grid({ type: 'page', offset: -1, limit: 200, filters: [] })!, /grid: page: offset/);
  assert.match(grid({ type: 'page', offset: 0, limit: 200, sortColumn: -1, filters: [] })!, /sortColumn/);
  assert.match(grid({ type: 'page', offset: 0, limit: 200, descending: 'yes', filters: [] })!, /descending should/);
  assert.match(grid({ type: 'drop' })!, /grid: unknown message type "drop"/);
  assert.match(verdict({ type: 'grid', exchange: 0, message: 'page' })!, /message should be object/);
});

test(
  'a real episode through exchangeEvent + TextBatcher + applyEvent: streamed text coalesced, turns, SQL, ' +
    'rows, end',
  async () => {
    const model = scriptedModel([
      {
        text:
          '<think>Count the books of each genre.</think>\n<sql>SELECT genre, count(*) AS n FROM book GROUP BY ' +
          'genre ORDER BY genre</sql>',
        chunks: 12,
      },
      { text: '<think>Mistype.</think>\n<sql>SELECT nme FROM author</sql>', chunks: 5 },
      { text: '<think>Answer.</think>\n<solution>SELECT count(*) FROM book</solution>', chunks: 5 },
    ]);
    const host = emptyState('test model');
    const app = emptyState('test model');
    const sent: { exchange: number; event: ExchangeEvent }[] = [];
    let deltas = 0;
    // delayMs so large the timer never fires: only other events flush, which is the order guarantee under test.
    const batcher = new TextBatcher((exchange, event) => {
      // What postMessage does to it: a JSON round trip. The app applies exactly what arrives.
      const wire = JSON.parse(JSON.stringify({ exchange, event })) as { exchange: number; event: ExchangeEvent };
      sent.push(wire);
      assert.equal(applyEvent(host, exchange, event), true, event.kind);
      assert.equal(applyEvent(app, wire.exchange, wire.event), true);
    }, 60_000);
    const record = await runEpisode({
      task: { question: 'How many books?', dbPath: db },
      protocolName: 'skyrl',
      pool,
      model,
      config: { maxTurns: 5 },
      onEvent: (e) => {
        if (e.type === 'text') deltas++;
        batcher.push(0, exchangeEvent(e, 'How many books?'));
      },
    });
    batcher.flush();
    assert.equal(record.end, 'answer', record.error ?? '');
    assert.deepEqual(app, JSON.parse(JSON.stringify(host)), 'the app mirrors the host exactly');
    const texts = sent.filter((s) => s.event.kind === 'text').length;
    assert.ok(deltas >= 20 && texts === 3, `${deltas} streamed pieces became ${texts} text events (one per turn)`);
    assert.deepEqual(
      sent.map((s) => s.event.kind).filter((k) => k !== 'text'),
      [
        'start',
        'turn',
        'action',
        'exec',
        'observation',
        'turn',
        'action',
        'exec',
        'observation',
        'turn',
        'action',
        'end',
      ],
    );

    const x = app.exchanges[0];
    assert.deepEqual(
      [x.id, x.question, x.protocol, x.budget, x.running, x.end, x.finalSql],
      [record.id, 'How many books?', 'skyrl', 5, false, 'answer', 'SELECT count(*) FROM book'],
    );
    assert.equal(turnsUsed(x), 3);
    assert.equal(isRunning(app), false);
    const [t0, t1, t2] = x.turns;
    assert.equal(t0.text, record.turns[0].assistant, 'the whole turn replaces the streamed text');
    assert.deepEqual(
      [t0.kind, t0.thought, t0.sql],
      [
        'execute',
        'Count the books of each genre.',
        'SELECT genre, count(*) AS n FROM book GROUP BY genre ORDER BY genre',
      ],
    );
    assert.deepEqual(t0.exec?.columns, ['genre', 'n']);
    assert.ok(
      (t0.exec?.rows.length ?? 0) > 1 && t0.exec?.rows.every((r) => typeof r[1] === 'number'),
      JSON.stringify(t0.exec?.rows),
    );
    assert.match(t0.observation ?? '', /<observation>/);
    assert.deepEqual([t1.exec?.ok, t1.exec?.errorClass], [false, 'sql']);
    assert.match(t1.exec?.error ?? '', /no such column: nme/);
    assert.deepEqual([t2.kind, t2.exec, t2.observation], ['answer', null, null]);
  },
);

test('the reducer ignores events for exchanges that do not exist and starts only at the next index', () => {
  const s = emptyState();
  assert.equal(applyEvent(s, 0, { kind: 'turn', index: 0, finalCall: false }), false);
  assert.equal(applyEvent(s, 1, { kind: 'start', id: 'a', question: 'q', protocol: 'skyrl', budget: 3 }), false);
  assert.equal(applyEvent(s, 0, { kind: 'start', id: 'a', question: 'q', protocol: 'skyrl', budget: 3 }), true);
  assert.equal(isRunning(s), true);
  assert.equal(applyEvent(s, 0, { kind: 'text', index: 0, delta: 'hel' }), true);
  applyEvent(s, 0, { kind: 'text', index: 0, delta: 'lo' });
  assert.equal(s.exchanges[0].turns[0].text, 'hello', 'text before a turn event still lands on its turn');
  applyEvent(s, 0, { kind: 'end', end: 'cancelled', finalSql: null, error: null, totalMs: 12 });
  applyEvent(s, 0, { kind: 'resultRunning' });
  applyEvent(s, 0, {
    kind: 'result',
    result: {
      ok: true,
      errorClass: null,
      error: null,
      columns: ['a'],
      rows: [[1]],
      rowCount: 1,
      truncated: false,
      ms: 1,
    },
  });
  applyEvent(s, 0, { kind: 'saved', path: '/tmp/t.jsonl' });
  assert.deepEqual(
    [s.exchanges[0].end, s.exchanges[0].resultRunning, s.exchanges[0].result?.rows, s.exchanges[0].savedTo],
    ['cancelled', false, [[1]], '/tmp/t.jsonl'],
  );
  assert.equal(isRunning(s), false);
});
