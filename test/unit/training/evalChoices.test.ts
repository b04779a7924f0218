// Evaluate Checkpoint… asks once: the last dataset, databases and protocol are offered first for the next model, the
// workspace's Spider-style files with their databases next, and its dialogs open in the folder used last or the
// workspace (issue 32, item 11).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { dialogFolder, evalSetChoices, protocolOrder, readEvalMemory } from '../../../src/app/train/evalChoices';
import { tempDir } from '../../helpers/fixtures';

function workspace(): { ws: string; file: string; dbDir: string } {
  const ws = tempDir();
  const dbDir = join(ws, 'bench', 'database');
  mkdirSync(join(dbDir, 'choir'), { recursive: true });
  new Database(join(dbDir, 'choir', 'choir.sqlite')).exec('CREATE TABLE singer (name TEXT)').close();
  const file = join(ws, 'bench', 'dev.json');
  writeFileSync(
    file,
    JSON.stringify([{ db_id: 'choir', question: 'How many?', query: 'SELECT count(*) FROM singer' }]),
  );
  return { ws, file, dbDir };
}

test('nothing remembered: the workspace dataset and its databases, then another file; dialogs in the workspace', () => {
  const { ws, file, dbDir } = workspace();
  const sets = evalSetChoices({}, ws);
  assert.deepEqual(
    sets.map((s) => s.set),
    [{ dataset: `spider:${file}`, dbDir }, null],
  );
  assert.equal(dialogFolder({}, ws), ws);
});

test('remembered: the last set, protocol included, first (asked once); the same file is not offered twice', () => {
  const { ws, file, dbDir } = workspace();
  const memory = readEvalMemory({ dataset: `spider:${file}`, dbDir, protocol: 'skyrl', folder: 7 });
  assert.deepEqual(memory, { dataset: `spider:${file}`, dbDir, protocol: 'skyrl' });
  const sets = evalSetChoices(memory, ws);
  assert.deepEqual(
    sets.map((s) => [s.description, s.set]),
    [
      ['last used', { dataset: `spider:${file}`, dbDir, protocol: 'skyrl' }],
      ['a Spider-format JSON file, then its databases folder', null],
    ],
  );
  assert.equal(dialogFolder(memory, ws), join(ws, 'bench'), "the last dataset's folder");
  assert.equal(dialogFolder({ ...memory, folder: '/data/spider' }, ws), '/data/spider');
  assert.deepEqual(protocolOrder(['mtir', 'skyrl', 'sqltrail'], 'skyrl'), ['skyrl', 'mtir', 'sqltrail']);
  assert.deepEqual(protocolOrder(['mtir', 'skyrl'], 'gone'), ['mtir', 'skyrl']);
});
