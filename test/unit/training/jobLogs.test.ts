// A failed job, readable: the job panel's log shows stdout and stderr together (the traceback is in stderr while
// stdout is often empty), and the Quarry output channel keeps the failure with its log's last lines and where the logs
// are (issue 32, item 10).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { logSections } from '../../../webview/jobs/logSections';
import { failureLogEntry } from '../../../src/app/jobs/failure';

test('the log view: both streams, each with its line count; an empty one says so', () => {
  const shown = logSections({
    stdout: [],
    stderr: ['Traceback (most recent call last):', '  File "x.py", line 1', 'ValueError: bf16 needs a GPU'],
  });
  assert.deepEqual(
    shown.map((s) => [s.stream, s.title]),
    [
      ['stdout', 'stdout (0 lines)'],
      ['stderr', 'stderr (3 lines)'],
    ],
  );
  assert.equal(shown[0].text, '(empty)');
  assert.match(shown[1].text, /ValueError: bf16 needs a GPU$/);
});

test("the Quarry log's entry for a failed job: what failed, on which target, its log's end and its folder", () => {
  const job = { id: 'j1', name: 'tiny-sql · sft · trl SFT · 11-29 00:41:07', target: 'local', status: 'failed' };
  const entry = failureLogEntry(
    { ...job, reason: 'exit code 1' },
    'ValueError: bf16 needs a GPU',
    'Traceback (most recent call last):\nValueError: bf16 needs a GPU',
    '/ws/.quarry/jobs/j1',
  );
  assert.equal(
    entry,
    'job tiny-sql · sft · trl SFT · 11-29 00:41:07 (j1) on local failed: ValueError: bf16 needs a GPU\n' +
      '  last lines of its log:\n    Traceback (most recent call last):\n    ValueError: bf16 needs a GPU\n' +
      '  logs: /ws/.quarry/jobs/j1/stderr.log, /ws/.quarry/jobs/j1/stdout.log',
  );
  assert.match(failureLogEntry({ ...job, reason: 'exit code 1' }, '', '', '/d'), /failed: exit code 1\n {2}\(its logs/);
});
