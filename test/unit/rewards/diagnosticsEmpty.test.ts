// Reward Diagnostics over a file with nothing to score says why instead of charting EX 0.0% over zero trajectories,
// and a file opens on its own trajectories' protocol's panel (SkyRL trajectories on the skyrl panel, not sqltrail).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadPanel } from '../../../src/core/rewards';
import { scoreRun } from '../../../src/core/rewards/scoreRun';
import { runDiagnostics } from '../../../src/core/rewards/report';
import { filePanel } from '../../../src/extension/diagnostics/filePanel';
import { nothingScored } from '../../../webview/diagnostics/emptyRun';
import { newPool, newResources, skyrlEpisode, trajectory } from './fixtures';

const pool = newPool();
after(() => pool.close());

const GOLD = 'SELECT name FROM student';

test('four trajectories without gold SQL: nothing scored, and the panel says why instead of EX 0.0%', async () => {
  const records = [1, 2, 3, 4].map((i) => skyrlEpisode([], 'SELECT 1', { id: `t${i}` }));
  const resources = newResources(pool);
  const run = runDiagnostics(await scoreRun(records, loadPanel('skyrl'), { resources }), records, resources);
  assert.equal(run.scored, 0);
  assert.equal(run.ex, 0, 'the report alone reads as EX 0.0%');
  assert.deepEqual(nothingScored(run), ['4 trajectories: no gold SQL in task.gold']);
  const scored = [skyrlEpisode([], GOLD, { id: 'ok', gold: GOLD }), ...records];
  const some = runDiagnostics(await scoreRun(scored, loadPanel('skyrl'), { resources }), scored, resources);
  assert.equal(some.scored, 1);
  assert.equal(nothingScored(some), null, 'one scored trajectory is charted');
  assert.deepEqual(
    nothingScored({
      scored: 0,
      skipped: [
        { id: 'a', reason: 'database not found: /x/a.sqlite' },
        { id: 'b', reason: 'database not found: /x/b.sqlite' },
        { id: 'c', reason: 'no gold SQL in task.gold' },
      ],
    }),
    ['2 trajectories: database not found', '1 trajectory: no gold SQL in task.gold'],
  );
});

test("a file opens on its trajectories' own protocol's panel", () => {
  const skyrl = [1, 2, 3].map((i) => skyrlEpisode([], GOLD, { id: `s${i}` }));
  assert.equal(filePanel(skyrl), 'skyrl');
  const mt = trajectory({ id: 'm', turns: [], finalSql: GOLD, protocol: 'mtsqlr1' });
  assert.equal(filePanel([...skyrl, mt]), 'skyrl', 'the most common protocol');
  assert.equal(filePanel([mt]), 'mtsqlr1');
  assert.equal(filePanel([trajectory({ id: 'p', turns: [], finalSql: GOLD, protocol: 'sqltrail' })]), 'sqltrail');
});
