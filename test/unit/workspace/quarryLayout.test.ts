// The `.quarry/` layout: every path stays where users' files already are (a moved path would lose them), paths are
// built under the workspace, and Quarry's own folder is recognised at any depth and with either separator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { isQuarryOwnPath, QUARRY_LAYOUT, quarryPath } from '../../../src/core/workspace/quarryLayout';

test('the layout keeps every path where existing workspaces have their files', () => {
  assert.deepEqual(QUARRY_LAYOUT, {
    targets: '.quarry/targets.json',
    jobs: '.quarry/jobs',
    launches: '.quarry/launches',
    data: '.quarry/data',
    trajectories: '.quarry/trajectories',
    askedTrajectories: '.quarry/trajectories/asked.jsonl',
    labels: '.quarry/labels.sqlite',
    modelsRegistry: '.quarry/models.json',
    models: '.quarry/models',
    modelCompare: '.quarry/models/compare',
  });
});

test('quarryPath: under the workspace, with segments below the place', () => {
  assert.equal(quarryPath('/w', 'labels'), join('/w', '.quarry', 'labels.sqlite'));
  assert.equal(quarryPath('/w', 'models', 'sft-2', 'evals'), join('/w', '.quarry', 'models', 'sft-2', 'evals'));
  assert.equal(quarryPath('/w', 'jobs', 'j1', 'job.json'), join('/w', '.quarry', 'jobs', 'j1', 'job.json'));
});

test('isQuarryOwnPath: inside .quarry at any depth, not names that merely contain it', () => {
  assert.equal(isQuarryOwnPath('/w/.quarry/exports/copy.sqlite'), true);
  assert.equal(isQuarryOwnPath('C:\\w\\sub\\.quarry\\labels.jsonl'), true);
  assert.equal(isQuarryOwnPath('/w/data/clinic.sqlite'), false);
  assert.equal(isQuarryOwnPath('/w/my.quarry/x.db'), false);
  assert.equal(isQuarryOwnPath('/w/.quarry-old/x.db'), false);
});
