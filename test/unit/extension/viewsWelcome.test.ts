// The welcome text of Quarry's views (package.json `viewsWelcome`): VS Code renders only links and line breaks there,
// so Markdown code spans would show as literal backticks; each text must read as plain words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as {
  contributes: { viewsWelcome: Array<{ view: string; contents: string }> };
};

test('no view welcome text holds Markdown VS Code does not render (backticks, emphasis)', () => {
  const welcomes = pkg.contributes.viewsWelcome;
  assert.ok(welcomes.length > 0);
  for (const w of welcomes) {
    assert.doesNotMatch(w.contents, /`/, `${w.view}: backticks show literally: ${w.contents}`);
    assert.doesNotMatch(w.contents, /\*\*|__/, `${w.view}: emphasis shows literally: ${w.contents}`);
  }
});
