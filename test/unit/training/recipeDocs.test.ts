// docs/training.md's "Recipes and launches" names every recipe setting and every engine key the mapping tables write,
// so the documented tables cannot drift from the code's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTING_KEYS } from '../../../src/core/training/recipe';
import { VERL_MAPPING } from '../../../src/core/training/verlLaunch';
import { SKYRL_MAPPING } from '../../../src/core/training/skyrlLaunch';
import { TRL_MAPPING } from '../../../src/core/training/trlLaunch';

const doc = readFileSync(join(__dirname, '..', '..', '..', '..', 'docs', 'training.md'), 'utf8');
const section = doc.slice(doc.indexOf('## Recipes and launches'));

test('every recipe setting and every mapped engine key is in docs/training.md, Recipes and launches', () => {
  assert.ok(section.length > 1000, 'the section exists');
  for (const key of SETTING_KEYS) assert.ok(section.includes(`\`${key}\``), key);
  for (const row of [...VERL_MAPPING, ...SKYRL_MAPPING, ...TRL_MAPPING]) {
    for (const key of row.engine) assert.ok(section.includes(`\`${row.add?.includes(key) ? '+' : ''}${key}\``), key);
    assert.ok(section.includes(`\`${row.file}\``), row.file);
  }
});
