// Tests of models/spec: openai specs: base URL without trailing slash, model after the first #; onnx specs keep the
// directory as written
import { test } from 'node:test';
import { join } from 'node:path';
import { tempDir } from '../../helpers/fixtures';
import assert from 'node:assert/strict';
import { createModel, parseModelSpec, formatModelSpec, ModelError } from '../../../src/core/models';

test('openai specs: base URL without trailing slash, model after the first #', () => {
  assert.deepEqual(parseModelSpec('openai:http://127.0.0.1:8000/v1#Qwen2.5-7B'), {
    kind: 'openai',
    baseURL: 'http://127.0.0.1:8000/v1',
    model: 'Qwen2.5-7B',
    raw: 'openai:http://127.0.0.1:8000/v1#Qwen2.5-7B',
  });
  const ollama = parseModelSpec('openai:http://localhost:11434/v1/#qwen2.5-coder:7b');
  assert.equal(ollama.kind === 'openai' && ollama.baseURL, 'http://localhost:11434/v1');
  assert.equal(ollama.kind === 'openai' && ollama.model, 'qwen2.5-coder:7b');
  const hf = parseModelSpec('openai:https://api.example.com/v1#Qwen/Qwen2.5-Coder-7B-Instruct');
  assert.equal(hf.kind === 'openai' && hf.model, 'Qwen/Qwen2.5-Coder-7B-Instruct');
  assert.equal(formatModelSpec(ollama), 'openai:http://localhost:11434/v1#qwen2.5-coder:7b');
});

test('onnx specs keep the directory as written', () => {
  assert.deepEqual(parseModelSpec('onnx:models/qwen-0.5b'), {
    kind: 'onnx',
    dir: 'models/qwen-0.5b',
    raw: 'onnx:models/qwen-0.5b',
  });
  assert.equal(formatModelSpec(parseModelSpec('onnx:/abs/dir')), 'onnx:/abs/dir');
});

test('bad specs are bad-spec errors that say what is wrong and show the expected forms', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /empty/],
    ['qwen', /no backend prefix/],
    ['vllm:http://x/v1#m', /unknown backend "vllm"/],
    ['http://127.0.0.1:8000/v1#m', /needs the openai: prefix.*openai:http:\/\/127\.0\.0\.1:8000\/v1#<model>/],
    ['openai:http://127.0.0.1:8000/v1', /needs #<model>/],
    ['openai:http://127.0.0.1:8000/v1#', /model name after # is empty/],
    ['openai:#m', /base URL is empty/],
    ['openai:127.0.0.1:8000#m', /must be http\(s\)|not a URL/],
    ['openai:not a url#m', /not a URL/],
    ['openai:ftp://h/v1#m', /must be http\(s\)/],
    ['openai:http://h/v1?x=1#m', /query string/],
    ['onnx:', /needs a model directory/],
  ];
  for (const [spec, why] of cases) {
    assert.throws(
      () => parseModelSpec(spec),
      (e: unknown) => {
        assert.ok(e instanceof ModelError, spec);
        assert.equal(e.kind, 'bad-spec');
        assert.match(e.message, why, spec);
        assert.match(e.message, /openai:<baseURL>#<model>.*onnx:<dir>/, spec);
        return true;
      },
    );
  }
});

test('createModel rejects a bad spec with the same error', async () => {
  await assert.rejects(createModel('gpt-4'), { name: 'ModelError', kind: 'bad-spec' });
});

test('createModel hands onnx: specs to the onnx backend, resolving a relative directory against cwd', async () => {
  const cwd = tempDir();
  await assert.rejects(createModel('onnx:models/none-here', { cwd }), (e: unknown) => {
    assert.ok(e instanceof ModelError);
    assert.equal(e.kind, 'load');
    assert.ok(e.message.includes(join(cwd, 'models', 'none-here')), e.message);
    return true;
  });
});
