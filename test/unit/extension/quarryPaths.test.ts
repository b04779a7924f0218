// Quarry's own folder is recognised at any depth and with either separator, and nothing else is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isQuarryOwnPath } from '../../../src/extension/quarryPaths';

test('isQuarryOwnPath: inside .quarry at any depth, not names that merely contain it', () => {
  assert.equal(isQuarryOwnPath('/w/.quarry/exports/copy.sqlite'), true);
  assert.equal(isQuarryOwnPath('C:\\w\\sub\\.quarry\\labels.jsonl'), true);
  assert.equal(isQuarryOwnPath('/w/data/clinic.sqlite'), false);
  assert.equal(isQuarryOwnPath('/w/my.quarry/x.db'), false);
  assert.equal(isQuarryOwnPath('/w/.quarry-old/x.db'), false);
});
