// A failed job says what failed in one line: the Python exception that ended it (type and message), read from real
// tracebacks that python3 prints here (an apostrophe in the message, chained exceptions, warnings before, a message
// over two lines, Ray's per-line prefixes), and a local job's recorded reason is that line, not a splice of its log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { JobStore, refreshJob, submitJob } from '../../../src/app/jobs';
import { failureNotice, failureSummary, jobFailureSummary, pythonException } from '../../../src/app/jobs/failure';
import { tempDir } from '../../helpers/fixtures';

/** What python3 prints on stderr running `code` (which must fail). */
function stderrOf(code: string): string {
  const r = spawnSync('python3', ['-c', code], { encoding: 'utf8' });
  assert.notEqual(r.status, 0, 'the program must fail');
  return r.stderr;
}

const BF16 = `
import sys, warnings
print("loading the model", file=sys.stderr)
warnings.warn("torch_dtype is deprecated! Use dtype instead!")
def check():
    raise ValueError("Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train on CPU.")
check()
`;

const CHAINED = `
def load():
    try:
        {}["model.safetensors"]
    except KeyError as e:
        raise OSError("can't load the model's weights from 'out/final'") from e
try:
    load()
except OSError:
    raise RuntimeError("the trainer's setup failed: it isn't ready")
`;

test('the last exception line of a real traceback: type and message, apostrophes and chains kept whole', () => {
  assert.deepEqual(pythonException(stderrOf(BF16)), {
    type: 'ValueError',
    message: "Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train on CPU.",
  });
  const chained = stderrOf(CHAINED);
  assert.match(chained, /During handling of the above exception/);
  assert.deepEqual(pythonException(chained), {
    type: 'RuntimeError',
    message: "the trainer's setup failed: it isn't ready",
  });
  assert.equal(failureSummary(stderrOf('raise ValueError("first line\\nsecond line")')), 'ValueError: first line');
  assert.equal(failureSummary(stderrOf('raise KeyboardInterrupt')), 'KeyboardInterrupt');
  assert.equal(
    failureSummary(stderrOf('import json; json.loads("{")')),
    'json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
  );
  // Ray prefixes each line a worker prints with the actor and its pid.
  const ray = stderrOf(BF16)
    .split('\n')
    .map((l) => (l ? `(TaskRunner pid=4242) ${l}` : l))
    .join('\n');
  assert.equal(failureSummary(ray).split(':')[0], 'ValueError');
});

test('without a traceback: the last line of output, then nothing', () => {
  assert.equal(failureSummary('warming up\nboom: no GPU\n\n'), 'boom: no GPU');
  assert.equal(failureSummary('', 'only stdout\n'), 'only stdout');
  assert.equal(failureSummary(''), '');
});

test("a failed local job's reason is one line naming the exception", async () => {
  const store = new JobStore(tempDir());
  const job = await submitJob(store, { target: 'local', name: 'sft', command: ['python3', '-c', CHAINED] });
  const deadline = Date.now() + 20_000;
  while ((await refreshJob(store, job.id)).status === 'running' && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  const done = store.get(job.id);
  assert.equal(done.status, 'failed');
  assert.equal(done.reason, "exited with code 1: RuntimeError: the trainer's setup failed: it isn't ready");
  // The notification: one line, the exception's type and message (the log is behind its Show Log button).
  const notice = failureNotice(done, jobFailureSummary(store.dir(job.id)));
  assert.equal(notice, "Quarry: job sft failed: RuntimeError: the trainer's setup failed: it isn't ready");
  assert.equal(
    failureNotice({ name: 'x', status: 'lost', reason: 'the processes ended without an exit code' }, 'step 3'),
    'Quarry: job x lost: the processes ended without an exit code',
  );
  assert.equal(failureNotice({ name: 'x', status: 'failed', reason: null }, ''), 'Quarry: job x failed.');
});
