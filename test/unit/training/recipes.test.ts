// The five papers' recipes in trainer/recipes/: each is sound (every value sourced to the paper or marked as
// Quarry's choice), carries the numbers its paper prints, and a broken recipe is refused with its fields named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { choicesOf, listRecipes, loadRecipe, recipeProblems } from '../../../src/core/training/recipes';
import { tempDir } from '../../helpers/fixtures';

const dir = join(__dirname, '..', '..', '..', '..', 'trainer', 'recipes');

test('the five recipes load, and every value is sourced or a choice', () => {
  assert.deepEqual(listRecipes(dir), ['mtir-sql', 'mtsql-r1', 'progress-sql', 'skyrl-sql', 'sql-trail']);
  for (const name of listRecipes(dir)) assert.doesNotThrow(() => loadRecipe(name, dir), name);
});

test("the papers' numbers", () => {
  const trail = loadRecipe('sql-trail', dir);
  assert.deepEqual(
    [
      trail.rl.group_size.value,
      trail.rl.max_turns.value,
      trail.rl.learning_rate.value,
      trail.rl.kl_coef.value,
      trail.sft!.learning_rate.value,
    ],
    [6, 10, 1e-6, 0, 1e-5],
  );
  assert.match(String(trail.rl.clip_high.choice), /clip-higher without numbers/);
  const sky = loadRecipe('skyrl-sql', dir);
  assert.deepEqual(
    [
      sky.rl.batch_size.value,
      sky.rl.group_size.value,
      sky.rl.temperature.value,
      sky.rl.steps.value,
      sky.data.rl_size.value,
    ],
    [256, 5, 0.6, 35, 653],
  );
  const mtir = loadRecipe('mtir-sql', dir);
  assert.deepEqual(
    [mtir.rl.batch_size.value, mtir.rl.max_turns.value, mtir.rl.max_sequence_length.value],
    [64, 6, 8192],
  );
  const r1 = loadRecipe('mtsql-r1', dir);
  assert.deepEqual(
    [r1.rl.max_prompt_length.value, r1.rl.max_response_length.value, r1.data.curriculum_bin_size.value],
    [4000, 8000, 2000],
  );
  const prog = loadRecipe('progress-sql', dir);
  assert.deepEqual(
    [
      prog.rl.group_size.value,
      prog.rl.max_turns.value,
      prog.rl.clip_low.value,
      prog.rl.kl_coef.value,
      prog.eval.vote.value,
    ],
    [8, 4, 0.2, 0, 8],
  );
  assert.ok(
    choicesOf(prog).every((c) => c.field.startsWith('rl.loss_agg_mode')),
    'Table 4 leaves only the loss aggregation open',
  );
});

test('a broken recipe is refused with each field named', () => {
  assert.deepEqual(
    recipeProblems({
      schema: 'quarry.recipe/1',
      name: 'x',
      paper: 'p',
      protocol: { value: 'nope', source: 's' },
      panel: { value: 'x' },
      base_model: { value: 'm', source: 's', choice: 'c' },
      data: {},
      sft: null,
      rl: { lr: 1 },
      eval: {},
    }),
    [
      'panel: give exactly one of "source" (the paper\'s section) and "choice" (why, when the paper is silent)',
      'base_model: give exactly one of "source" (the paper\'s section) and "choice" (why, when the paper is silent)',
      'protocol: one of skyrl, sqltrail, mtir, mtsqlr1, progress',
      'rl.lr: expected {"value", "source" | "choice"}',
    ],
  );
  const d = tempDir();
  writeFileSync(join(d, 'bad.json'), '{"schema": "quarry.recipe/1"');
  assert.throws(() => loadRecipe(join(d, 'bad.json'), dir), /is not JSON/);
  assert.throws(
    () => loadRecipe('nope', dir),
    /no recipe nope \(built in: mtir-sql, mtsql-r1, progress-sql, skyrl-sql, sql-trail/,
  );
});
