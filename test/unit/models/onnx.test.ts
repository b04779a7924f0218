// The onnx backend against the repository's own tiny model (media/models/tiny-sql, made by scripts/tiny-model):
// greedy output must equal PyTorch's token for token, and stops, budgets, aborts, seeds and bad directories must
// behave as the ChatModel contract says.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync, copyFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir, fixturesDir } from '../../helpers/fixtures';
import { createOnnxModel, readModelFiles, PromptEncoder, type OnnxChatModel } from '../../../src/core/models/onnx';
import { ModelError, type ChatMessage } from '../../../src/core/models/types';

const modelDir = join(repoRoot, 'media', 'models', 'tiny-sql');

interface RefCase {
  messages: ChatMessage[];
  prompt_ids: number[];
  max_new_tokens: number;
  output_ids: number[];
  output_text: string;
}
interface Reference {
  stop_ids: number[];
  cases: RefCase[];
  tokenizer: { text: string; ids: number[] }[];
}
const reference = JSON.parse(readFileSync(join(modelDir, 'reference.json'), 'utf8')) as Reference;

/** The reference output without the end-of-sequence token that ended it, and whether one did. */
function expected(c: RefCase): { ids: number[]; stopped: boolean } {
  const last = c.output_ids[c.output_ids.length - 1];
  const stopped = reference.stop_ids.includes(last);
  return { ids: stopped ? c.output_ids.slice(0, -1) : c.output_ids, stopped };
}

/** A copy of the tiny model's directory that a test may damage. */
function copyModel(): string {
  const dir = join(tempDir('quarry-onnx-'), 'model');
  mkdirSync(dir);
  for (const f of readdirSync(modelDir)) copyFileSync(join(modelDir, f), join(dir, f));
  return dir;
}

async function loadError(dir: string): Promise<ModelError> {
  try {
    const m = await createOnnxModel(dir);
    await m.close();
  } catch (err) {
    assert.ok(err instanceof ModelError, `expected a ModelError, got ${String(err)}`);
    assert.equal(err.kind, 'load');
    return err;
  }
  assert.fail(`loading ${dir} should have failed`);
}

describe('tokenizer and chat template', () => {
  const enc = new PromptEncoder(readModelFiles(modelDir));

  test('tokenizer.json encodes text to the same ids as the Python tokenizer that made it', () => {
    assert.ok(reference.tokenizer.length > 0);
    for (const s of reference.tokenizer) assert.deepEqual(enc.encodeText(s.text), s.ids, s.text);
  });

  test('the jinja chat template and tokenizer give the prompt ids PyTorch was run on', () => {
    for (const c of reference.cases) assert.deepEqual(enc.encodeMessages(c.messages), c.prompt_ids);
  });

  test('decoding leaves special tokens out', () => {
    const ids = enc.encodeText('<|im_start|>assistant\nSELECT 1;<|im_end|>');
    assert.equal(enc.decode(ids), 'assistant\nSELECT 1;');
  });
});

describe('generation', () => {
  let model: OnnxChatModel;
  before(async () => {
    model = await createOnnxModel(modelDir);
  });
  after(async () => {
    await model.close();
  });

  test('model reports its spec and the Optimum decoder inputs', () => {
    assert.equal(model.spec, `onnx:${modelDir}`);
    for (const name of [
      'input_ids',
      'attention_mask',
      'position_ids',
      'past_key_values.0.key',
      'past_key_values.0.value',
    ]) {
      assert.ok(model.inputNames.includes(name), name);
    }
  });

  test('greedy output equals the PyTorch reference token for token', async () => {
    assert.ok(reference.cases.length >= 3);
    for (const c of reference.cases) {
      const r = await model.generate({
        messages: c.messages,
        sampling: { temperature: 0, maxTokens: c.max_new_tokens },
      });
      const want = expected(c);
      assert.deepEqual(r.tokens, want.ids);
      assert.equal(r.finishReason, want.stopped ? 'stop' : 'length');
      assert.equal(r.stopString, null);
      assert.equal(r.text, c.output_text.replace(/<\|[a-z_]+\|>/g, ''));
      assert.equal(r.usage.promptTokens, c.prompt_ids.length);
      assert.equal(r.usage.completionTokens, want.ids.length);
      assert.ok(r.timings.totalMs > 0 && r.timings.firstTokenMs !== null);
    }
  });

  test('streamed pieces add up to the returned text', async () => {
    const c = reference.cases[0];
    const pieces: string[] = [];
    const r = await model.generate({
      messages: c.messages,
      sampling: { maxTokens: c.max_new_tokens },
      onText: (d) => pieces.push(d),
    });
    assert.ok(pieces.length > 1, 'text should arrive in several pieces');
    assert.equal(pieces.join(''), r.text);
  });

  test('a stop string ends generation; the text stops just before it and names it', async () => {
    const c = reference.cases[0];
    const full = await model.generate({ messages: c.messages, sampling: { maxTokens: c.max_new_tokens } });
    assert.ok(full.text.length > 12, `greedy text too short to cut: ${JSON.stringify(full.text)}`);
    // A stop string taken from the middle of the real output, so it may start inside a token.
    const at = Math.floor(full.text.length / 2);
    const stop = full.text.slice(at, at + 3);
    const first = full.text.indexOf(stop);
    const pieces: string[] = [];
    const r = await model.generate({
      messages: c.messages,
      sampling: { maxTokens: c.max_new_tokens, stop: ['never-in-the-output', stop] },
      onText: (d) => pieces.push(d),
    });
    assert.equal(r.finishReason, 'stop');
    assert.equal(r.stopString, stop);
    assert.equal(r.text, full.text.slice(0, first));
    assert.equal(pieces.join(''), r.text, 'no part of the stop string is streamed');
    assert.ok(r.usage.completionTokens < full.usage.completionTokens);
  });

  test('maxTokens caps the completion and reports length', async () => {
    const c = reference.cases[0];
    const r = await model.generate({ messages: c.messages, sampling: { maxTokens: 3 } });
    assert.equal(r.finishReason, 'length');
    assert.equal(r.usage.completionTokens, 3);
    assert.deepEqual(r.tokens, expected(c).ids.slice(0, 3));
  });

  test('sampling with a seed is reproducible, and the seed matters', async () => {
    const c = reference.cases[0];
    const run = async (seed: number) =>
      (
        await model.generate({
          messages: c.messages,
          sampling: { temperature: 1.5, topP: 0.98, maxTokens: 24, seed },
        })
      ).text;
    const a = await run(7);
    assert.equal(await run(7), a);
    const others = [await run(8), await run(9), await run(10)];
    assert.ok(
      others.some((t) => t !== a),
      'different seeds should not all give the same sample',
    );
  });

  test('aborting mid-generation rejects with an AbortError, and the model keeps working', async () => {
    const c = reference.cases[0];
    const ctl = new AbortController();
    const call = model.generate({
      messages: c.messages,
      sampling: { maxTokens: c.max_new_tokens },
      signal: ctl.signal,
      onText: () => ctl.abort(),
    });
    await assert.rejects(call, (err: Error) => err.name === 'AbortError');
    await assert.rejects(
      model.generate({ messages: c.messages, sampling: {}, signal: AbortSignal.abort() }),
      (err: Error) => err.name === 'AbortError',
    );
    const r = await model.generate({ messages: c.messages, sampling: { maxTokens: c.max_new_tokens } });
    assert.deepEqual(r.tokens, expected(c).ids);
  });

  test('calls made at once are answered in turn, each as if alone', async () => {
    const [a, b] = reference.cases;
    const [ra, rb] = await Promise.all(
      [a, b].map((c) => model.generate({ messages: c.messages, sampling: { maxTokens: c.max_new_tokens } })),
    );
    assert.deepEqual(ra.tokens, expected(a).ids);
    assert.deepEqual(rb.tokens, expected(b).ids);
  });

  test('timeoutMs rejects with a timeout ModelError', async () => {
    const c = reference.cases[0];
    await assert.rejects(
      model.generate({ messages: c.messages, sampling: { maxTokens: 400 }, timeoutMs: 1 }),
      (err: unknown) => err instanceof ModelError && err.kind === 'timeout',
    );
  });

  test('closing a model in the middle of a generation ends the call and leaves the process running', async () => {
    // Terminating the worker inside session.run used to abort the whole process from onnxruntime's teardown.
    for (let round = 0; round < 3; round++) {
      const m = await createOnnxModel(modelDir);
      let pieces = 0;
      let closing: Promise<void> | null = null;
      const call = m.generate({
        messages: [{ role: 'user', content: 'How many books are there?' }],
        sampling: { temperature: 0, maxTokens: 400 },
        onText: () => {
          if (++pieces === 1 + round) closing = m.close();
        },
      });
      await assert.rejects(call, /closed/);
      await closing;
    }
    const again = await createOnnxModel(modelDir);
    const r = await again.generate({
      messages: [{ role: 'user', content: 'hi' }],
      sampling: { temperature: 0, maxTokens: 3 },
    });
    assert.ok(r.usage.completionTokens > 0);
    await again.close();
  });

  test('a closed model refuses new calls', async () => {
    const m = await createOnnxModel(modelDir);
    await m.close();
    await assert.rejects(m.generate({ messages: [{ role: 'user', content: 'hi' }], sampling: {} }), /closed/);
  });
});

describe('bad model directories', () => {
  test('a missing directory', async () => {
    const err = await loadError(join(tempDir(), 'nowhere'));
    assert.match(err.message, /no model directory at .*nowhere/);
  });

  test('a file instead of a directory', async () => {
    const file = join(tempDir(), 'model.onnx');
    writeFileSync(file, 'x');
    assert.match((await loadError(file)).message, /is a file/);
  });

  for (const name of ['model.onnx', 'tokenizer.json', 'config.json', 'tokenizer_config.json']) {
    test(`a directory without ${name}`, async () => {
      const dir = copyModel();
      rmSync(join(dir, name));
      assert.match((await loadError(dir)).message, new RegExp(`has no ${name.replace('.', '\\.')}`));
    });
  }

  test('a model.onnx that is not ONNX', async () => {
    const dir = copyModel();
    writeFileSync(join(dir, 'model.onnx'), 'this is not a protobuf');
    assert.match((await loadError(dir)).message, /onnxruntime could not load .*model\.onnx/);
  });

  test('an ONNX model without the decoder inputs', async () => {
    const dir = copyModel();
    copyFileSync(join(fixturesDir, 'tiny-model', 'not-a-decoder.onnx'), join(dir, 'model.onnx'));
    const err = await loadError(dir);
    assert.match(err.message, /not a decoder with a key\/value cache/);
    assert.match(err.message, /missing inputs input_ids, attention_mask, past_key_values\.0\.key/);
    assert.match(err.message, /it has inputs x/);
  });

  test('a config.json with more layers than the model has', async () => {
    const dir = copyModel();
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
    const layers = config.num_hidden_layers;
    config.num_hidden_layers = layers + 1;
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    const err = await loadError(dir);
    assert.match(err.message, new RegExp(`missing inputs past_key_values\\.${layers}\\.key`));
  });

  test('a tokenizer_config.json without a chat template', async () => {
    const dir = copyModel();
    const cfg = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    delete cfg.chat_template;
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(cfg));
    assert.match((await loadError(dir)).message, /no chat template/);
  });

  test('a config.json that is not JSON', async () => {
    const dir = copyModel();
    writeFileSync(join(dir, 'config.json'), '{ nope');
    assert.match((await loadError(dir)).message, /config\.json is not valid JSON/);
  });
});
