// "Test Model Connection" names what is wrong in plain words, per backend, with the action that fixes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelError } from '../../../src/core/models/types';
import {
  connectedText,
  describeConnectionFailure,
  withEditorKeyHint,
} from '../../../src/extension/models/connectionReport';

test('server down, unknown model and auth failures of the openai backend', () => {
  const down = describeConnectionFailure(
    'openai',
    new ModelError('unreachable', 'cannot reach http://127.0.0.1:9/v1 (ECONNREFUSED)'),
  );
  assert.equal(down.title, 'Server down or unreachable');
  assert.match(down.detail, /ECONNREFUSED/);
  assert.equal(
    describeConnectionFailure('openai', new ModelError('unknown-model', 'model "x" is not served')).title,
    'Unknown model',
  );
  const auth = describeConnectionFailure('openai', new ModelError('auth', 'HTTP 401'));
  assert.equal(auth.title, 'Authentication failed');
  assert.ok(auth.actions.includes('Set API Key…'));
});

test('no vscode.lm model, and an invalid onnx directory', () => {
  const none = describeConnectionFailure('vscode-lm', new ModelError('unknown-model', 'VS Code offers no chat model'));
  assert.equal(none.title, 'No VS Code chat model');
  assert.deepEqual(none.actions, ['Switch Model…']);
  const onnx = describeConnectionFailure('onnx', new ModelError('load', 'the model directory /x has no config.json'));
  assert.equal(onnx.title, 'ONNX model directory invalid');
  assert.match(onnx.detail, /config\.json/);
});

test('cancellation and unexpected errors', () => {
  const abort = new Error('cancelled');
  abort.name = 'AbortError';
  assert.equal(describeConnectionFailure('openai', abort).title, 'Connection test cancelled');
  const other = describeConnectionFailure('onnx', new TypeError('boom'));
  assert.equal(other.title, 'Unexpected error');
  assert.equal(other.detail, 'boom');
  assert.equal(describeConnectionFailure('openai', 'text').detail, 'text');
});

test('auth messages point at the Set API Key command, not at environment variables the editor does not read', () => {
  const core =
    'http://127.0.0.1:1/v1/chat/completions answered HTTP 401: no API key was sent (set QUARRY_API_KEY or ' +
    'OPENAI_API_KEY). Server said: no';
  assert.equal(
    withEditorKeyHint(core),
    'http://127.0.0.1:1/v1/chat/completions answered HTTP 401: no API key was sent (run "Quarry: Set API ' +
      'Key…" to store one for this server). Server said: no',
  );
  assert.equal(
    withEditorKeyHint('the API key from apiKey option was refused'),
    'the API key from apiKey option was refused',
  );
});

test('a passing test says "connected, <model>, N ms", not what the model wrote', () => {
  assert.equal(connectedText('openai · qwen-7b', 41.6), 'connected, openai · qwen-7b, 42 ms');
});
