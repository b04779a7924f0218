// The atomic writes (src/core/util/atomicWrite.ts): the target holds the old content or the new one, whole, whatever
// happens to the writer: a failed rename, an aborted stream, or a process killed by SIGKILL in the middle of writing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  openAtomicFile,
  writeFileAtomic,
  writeFileAtomicSync,
  writeJsonAtomic,
  writeJsonAtomicSync,
} from '../../../src/core/util/atomicWrite';
import { tempDir } from '../../helpers/fixtures';

const temps = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.tmp'));

test('text and JSON, sync and async: the target is replaced, folders are made, no temporary file stays', async () => {
  const dir = tempDir('quarry-atomic-');
  const file = join(dir, 'a', 'b', 'state.json');
  writeJsonAtomicSync(file, { n: 1 }, 2);
  assert.equal(readFileSync(file, 'utf8'), '{\n  "n": 1\n}\n');
  await writeJsonAtomic(file, [1, 2]);
  assert.equal(readFileSync(file, 'utf8'), '[1,2]\n');
  writeFileAtomicSync(file, 'plain');
  assert.equal(readFileSync(file, 'utf8'), 'plain');
  await writeFileAtomic(file, new Uint8Array([104, 105]));
  assert.equal(readFileSync(file, 'utf8'), 'hi');
  await Promise.all([writeFileAtomic(file, 'x'), writeFileAtomic(file, 'y'), writeFileAtomic(file, 'z')]);
  assert.match(readFileSync(file, 'utf8'), /^[xyz]$/);
  assert.deepEqual(temps(join(dir, 'a', 'b')), []);
});

test('a write that cannot be renamed into place leaves the target as it was and no temporary file', async () => {
  const dir = tempDir('quarry-atomic-');
  const target = join(dir, 'taken');
  mkdirSync(join(target, 'inside'), { recursive: true }); // a folder that is not empty: rename over it fails
  assert.throws(() => writeFileAtomicSync(target, 'new'));
  await assert.rejects(writeJsonAtomic(target, { new: true }));
  assert.ok(statSync(target).isDirectory());
  assert.deepEqual(readdirSync(target), ['inside']);
  assert.deepEqual(temps(dir), []);
});

test('an aborted stream leaves the old file; a committed one replaces it', async () => {
  const dir = tempDir('quarry-atomic-');
  const file = join(dir, 'rows.jsonl');
  writeFileSync(file, 'old\n');
  const a = await openAtomicFile(file);
  await a.write('half a fi');
  await a.abort();
  assert.equal(readFileSync(file, 'utf8'), 'old\n');
  const b = await openAtomicFile(file);
  await b.write('new\n');
  assert.deepEqual(await b.commit(), {
    bytes: 4,
    sha256: '7aa7a5359173d05b63cfd682e3c38487f3cb4f7f1d60659fe59fab1505977d4c',
  });
  assert.equal(readFileSync(file, 'utf8'), 'new\n');
  assert.deepEqual(temps(dir), []);
});

test('a writer killed by SIGKILL mid-write never leaves a torn target, and the next write still works', async () => {
  const dir = tempDir('quarry-atomic-');
  const file = join(dir, 'big.txt');
  const size = 8 << 20;
  const helper = require.resolve('../../../src/core/util/atomicWrite');
  // The child rewrites the file over and over, alternating two contents of the same size, until it is killed.
  const script =
    `const { writeFileAtomicSync } = require(${JSON.stringify(helper)});\n` +
    `const a = 'a'.repeat(${size}), b = 'b'.repeat(${size});\n` +
    `for (let i = 0; ; i++) {\n` +
    `  writeFileAtomicSync(${JSON.stringify(file)}, i % 2 ? b : a);\n` +
    `  process.stdout.write('.');\n` +
    `}`;
  let leftovers = 0;
  for (let round = 0; round < 5; round++) {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let written = 0;
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        written += d.length;
        // Kill it at a different point of its next write each round (the file exists once one write is done).
        if (written === 1 + round) setTimeout(() => child.kill('SIGKILL'), 5 + round * 7);
      });
      child.on('exit', () => resolve());
    });
    const text = readFileSync(file, 'utf8');
    assert.equal(text.length, size, `round ${round}: the target is whole`);
    assert.ok(text === 'a'.repeat(size) || text === 'b'.repeat(size), `round ${round}: one content, not a mix`);
    leftovers = temps(dir).length;
  }
  // A killed writer may leave its temporary file (it never reached rename); it is not the target and is not in the way.
  assert.ok(leftovers <= 5);
  writeFileAtomicSync(file, 'after');
  assert.equal(readFileSync(file, 'utf8'), 'after');
  assert.ok(existsSync(file));
});
