// Nothing bound for the log may carry a key: known secrets, bearer tokens and key-shaped strings are masked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redact } from '../../../src/extension/redact';
import { apiKeyOrigin } from '../../../src/extension/secrets';

test('known secrets are masked wherever they appear, the longest first', () => {
  const out = redact('sent key abc123XYZ to the server; key abc123XYZ-extra too', ['abc123XYZ', 'abc123XYZ-extra']);
  assert.equal(out, 'sent key *** to the server; key *** too');
});

test('authorization headers, bearer tokens and key-shaped strings are masked without a list', () => {
  assert.equal(redact('Authorization: Bearer s3cr3t-token-value'), 'Authorization: ***');
  assert.equal(redact('header {"authorization":"xyz"}'), 'header {"authorization":"***"}');
  assert.equal(redact('using bearer abcdefghijklmnop'), 'using bearer ***');
  assert.equal(redact('key sk-proj-ABCDEFGHIJKLMNOP1234 refused'), 'key *** refused');
  assert.equal(redact('token hf_abcdefghijklmnopqrstu'), 'token ***');
});

test('ordinary text is left alone', () => {
  const text = "SELECT name FROM author WHERE country = 'sk'; model openai:http://127.0.0.1:8000/v1#qwen";
  assert.equal(redact(text, []), text);
});

test('API keys are stored per server origin', () => {
  assert.equal(apiKeyOrigin('https://api.openai.com/v1'), 'https://api.openai.com');
  assert.equal(apiKeyOrigin('http://127.0.0.1:8000/v1/'), 'http://127.0.0.1:8000');
  assert.notEqual(apiKeyOrigin('http://127.0.0.1:8000/v1'), apiKeyOrigin('http://127.0.0.1:8001/v1'));
});
