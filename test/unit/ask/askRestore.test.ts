// The Ask conversation after a window reload: real episodes (scripted model, a real SQLite file, the sandbox pool)
// streamed through the live path (exchangeEvent + applyEvent) give the conversation the webview saved; the same
// conversation rebuilt from the trajectory records (rebuildConversation, with the rows the saved state showed) must be
// identical. Questions not in the store, or recorded against another database, stay out.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSqlPool } from '../../../src/core/db/pool';
import { runEpisode } from '../../../src/core/agent/loop';
import type { AskState } from '../../../src/protocol/ask';
import { applyEvent, emptyState } from '../../../src/protocol/askState';
import { askRestore } from '../../../src/protocol/restore';
import type { TrajectoryRecord } from '../../../src/core/trajectories/types';
import { exchangeEvent } from '../../../src/extension/ask/events';
import { rebuildConversation } from '../../../src/extension/ask/restore';
import { buildDb } from '../../helpers/fixtures';
import { scriptedModel } from '../agent/envSupport';

const pool = createSqlPool({ size: 1, spares: 0 });
after(() => pool.close());
const db = buildDb('bookshop');
const STORE = '/work/.quarry/trajectories/asked.jsonl';

/** Runs one question the way the Ask panel does and appends its exchange to `live` from the streamed events. */
async function ask(
  live: AskState,
  question: string,
  protocolName: 'skyrl' | 'sqltrail',
  replies: string[],
  config: Record<string, unknown>,
  difficulty?: 'easy',
): Promise<TrajectoryRecord> {
  const at = live.exchanges.length;
  const record = await runEpisode({
    task: { question, dbPath: db, difficulty },
    protocolName,
    pool,
    config,
    model: scriptedModel(replies),
    // As the panel asks: the model's label on each card, and kept in the record for a rebuilt conversation.
    meta: { modelLabel: 'scripted · test' },
    onEvent: (e) => {
      applyEvent(live, at, exchangeEvent(e, question, 'scripted · test'));
    },
  });
  applyEvent(live, at, { kind: 'saved', path: STORE });
  return record;
}

/** A conversation about the test database, as the panel starts one. */
function conversation(): AskState {
  const s = emptyState('test model');
  s.db = { path: db, label: 'bookshop.sqlite' };
  return s;
}

const saved = (live: AskState) =>
  JSON.parse(JSON.stringify({ state: live, draft: 'half a question', open: [] })) as unknown;

test('a conversation rebuilt from records and saved state equals the one shown live (final call too)', async () => {
  const live = conversation();
  const first = await ask(
    live,
    'How many books?',
    'skyrl',
    [
      '<think>Count the books of each genre.</think>\n' +
        '<sql>SELECT genre, count(*) AS n FROM book GROUP BY genre ORDER BY genre</sql>',
      '<think>Mistype.</think>\n<sql>SELECT nme FROM author</sql>',
      '<think>Answer.</think>\n<solution>SELECT count(*) FROM book</solution>',
    ],
    { maxTurns: 5 },
  );
  // SQL-Trail's adaptive budget gives an easy question 2 turns; the third generation is the final call.
  const second = await ask(
    live,
    'And how many authors?',
    'sqltrail',
    [
      '<reasoning>look</reasoning><sql>SELECT name FROM author</sql>',
      '<sql>SELECT count(*) FROM author</sql>',
      '<solution>SELECT count(*) FROM author</solution>',
    ],
    { adaptive: true },
    'easy',
  );
  assert.deepEqual([first.end, second.end, second.turns.length, second.protocol.budget], ['answer', 'answer', 3, 2]);
  assert.deepEqual(
    live.exchanges[1].turns.map((t) => t.finalCall),
    [false, false, true],
  );

  const parsed = askRestore(saved(live));
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  assert.deepEqual(
    parsed.value.exchanges.map((x) => [x.id, x.hadResult]),
    [
      [first.id, false],
      [second.id, false],
    ],
  );
  const rebuilt = conversation();
  const out = rebuildConversation(
    rebuilt,
    parsed.value.exchanges,
    new Map([
      [first.id, first],
      [second.id, second],
    ]),
    db,
    STORE,
  );
  assert.deepEqual(out.missing, []);
  assert.deepEqual(
    out.exchanges.map((x) => x.record.id),
    [first.id, second.id],
  );
  assert.deepEqual(rebuilt, JSON.parse(JSON.stringify(live)));
  assert.ok((rebuilt.exchanges[0].turns[0].exec?.rows.length ?? 0) > 1, 'the rows the turn showed are back');
});

test("without the saved rows a turn keeps its result's shape; unknown ids and other databases stay out", async () => {
  const live = conversation();
  const record = await ask(
    live,
    'How many books?',
    'skyrl',
    [
      '<sql>SELECT genre, count(*) AS n FROM book GROUP BY genre</sql>',
      '<solution>SELECT count(*) FROM book</solution>',
    ],
    { maxTurns: 3 },
  );
  const elsewhere: TrajectoryRecord = {
    ...record,
    id: 'other-db',
    task: { ...record.task, db: { ...record.task.db, path: '/elsewhere.sqlite' } },
  };
  const rebuilt = conversation();
  const out = rebuildConversation(
    rebuilt,
    [
      { id: 'gone', hadResult: true, rows: [] },
      { id: record.id, hadResult: true, rows: [] },
      { id: 'other-db', hadResult: false, rows: [] },
    ],
    new Map([
      [record.id, record],
      ['other-db', elsewhere],
    ]),
    db,
    STORE,
  );
  assert.deepEqual(out.missing, ['gone', 'other-db']);
  assert.deepEqual(
    out.exchanges.map((x) => [x.record.id, x.rerun]),
    [[record.id, true]],
  );
  const exec = rebuilt.exchanges[0].turns[0].exec;
  const shown = live.exchanges[0].turns[0].exec;
  assert.deepEqual([exec?.columns, exec?.rowCount, exec?.rows], [shown?.columns, shown?.rowCount, []]);
  // Saved rows that do not fit the recorded result (another row count) are not put back.
  const wrong = askRestore(saved(live));
  assert.ok(wrong.ok);
  wrong.value.exchanges[0].rows[0].rowCount += 1;
  const again = conversation();
  rebuildConversation(again, wrong.value.exchanges, new Map([[record.id, record]]), db, STORE);
  assert.deepEqual(again.exchanges[0].turns[0].exec?.rows, []);
});
