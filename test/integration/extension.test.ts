// Extension basics in a real extension host: activation and its API, every command of this part registered, the
// settings' defaults as the manifest declares them, the model status bar item following the settings, and API keys
// round-tripping through SecretStorage to a real OpenAI-compatible server on 127.0.0.1 (and never into the log).
import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import { startReplayServer, type ReplayServer } from '../support/openaiReplayServer';
import type { QuarryApi } from '../../src/extension/extension';
import type { ConnectionTestResult } from '../../src/extension/modelCommands';
import { readSettings } from '../../src/extension/settings';
import { createVscodeLmModel } from '../../src/extension/models/vscodeLm';
import { ModelError } from '../../src/core/models/types';
import { until } from '../support/until';

const EXTENSION_ID = 'quarry.quarry';
const MODEL_KEYS = ['model.backend', 'model.baseUrl', 'model.name', 'model.onnxPath'];

async function api(): Promise<QuarryApi> {
  const ext = vscode.extensions.getExtension<QuarryApi>(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not installed`);
  return ext.activate();
}

async function setModel(values: Record<string, unknown>): Promise<void> {
  const cfg = vscode.workspace.getConfiguration('quarry');
  for (const [k, v] of Object.entries(values)) await cfg.update(k, v, vscode.ConfigurationTarget.Global);
}

async function resetModel(): Promise<void> {
  const cfg = vscode.workspace.getConfiguration('quarry');
  for (const k of MODEL_KEYS) await cfg.update(k, undefined, vscode.ConfigurationTarget.Global);
}

/** Waits for something the extension reaches on its own; mocha's timeout bounds it (no timing is asserted). */
const testConnection = () =>
  vscode.commands.executeCommand<ConnectionTestResult>('quarry.testConnection', { quiet: true });

/** Every log file the extension host wrote for this extension (the output channel is a LogOutputChannel). */
function extensionLogs(logDir: string): string {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.log')) out.push(readFileSync(p, 'utf8'));
    }
  };
  try {
    walk(logDir);
  } catch {
    /* not written yet */
  }
  return out.join('\n');
}

suite('extension basics', () => {
  suiteTeardown(resetModel);

  test('activates and returns its API: services, the Databases view, the status bar item', async () => {
    const a = await api();
    assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, true);
    assert.equal(typeof a.services.createModel, 'function');
    assert.ok(a.databases, 'the Databases view is registered');
    assert.ok(a.statusBar, 'the status bar item exists');
  });

  test('the commands of the basics and the Databases view are registered', async () => {
    await api();
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const c of [
      'quarry.showLog',
      'quarry.selectModel',
      'quarry.testConnection',
      'quarry.setApiKey',
      'quarry.clearApiKey',
      'quarry.showSchema',
      'quarry.showSchemaOf',
      'quarry.previewTable',
      'quarry.copyDdl',
      'quarry.refreshDatabases',
      'quarry.askAboutDatabase',
    ]) {
      assert.ok(registered.has(c), `${c} is registered`);
    }
  });

  test('settings: the manifest declares every default and the services read them', async () => {
    const a = await api();
    const props = (
      vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as {
        contributes: { configuration: { properties: Record<string, { default: unknown }> } };
      }
    ).contributes.configuration.properties;
    const cfg = vscode.workspace.getConfiguration('quarry');
    for (const [key, p] of Object.entries(props)) {
      assert.deepEqual(cfg.inspect(key.replace(/^quarry\./, ''))?.defaultValue, p.default, key);
    }
    const defaults = readSettings((k) => cfg.inspect(k)?.defaultValue);
    assert.equal(defaults.model.backend, 'vscode-lm');
    assert.equal(defaults.agent.maxTurns, 5);
    // The test workspace sets nothing about the model, so the services see the defaults.
    assert.deepEqual(a.services.settings().model, defaults.model);
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    assert.equal(a.services.trajectoryStorePath(), join(folder, '.quarry', 'trajectories', 'asked.jsonl'));
  });

  test('the status bar item names the model and follows the settings', async () => {
    const a = await api();
    const item = a.statusBar!;
    assert.equal(item.command, 'quarry.selectModel');
    assert.match(item.text, /vscode-lm/);
    await setModel({ 'model.backend': 'openai', 'model.name': 'qwen-7b' });
    await until('the status bar shows openai', () => item.text.includes('openai · qwen-7b'));
    await setModel({ 'model.backend': 'onnx', 'model.name': undefined });
    await until('the status bar shows onnx', () => item.text.includes('onnx · tiny-sql'));
    assert.equal(a.services.modelLabel(), 'onnx · tiny-sql (bookshop demo)');
    await resetModel();
    await until('the status bar shows vscode-lm again', () => item.text.includes('vscode-lm'));
  });
});

suite('models: test connection and API keys against a loopback OpenAI-compatible server', () => {
  let server: ReplayServer;
  const SECRET = 'k-quarry-integration-7f3a9c';

  suiteSetup(async () => {
    server = await startReplayServer({ models: ['replay-7b'], apiKey: SECRET, defaultResponse: 'OK' });
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('quarry.clearApiKey', { quiet: true });
    await resetModel();
    await server?.close();
  });

  test(
    'an API key set with the command goes through ' + 'SecretStorage to the server; clearing it makes auth fail',
    async () => {
      const a = await api();
      await setModel({ 'model.backend': 'openai', 'model.baseUrl': server.url, 'model.name': 'replay-7b' });
      await vscode.commands.executeCommand('quarry.clearApiKey', { quiet: true });

      const without = await testConnection();
      assert.equal(without.ok, false);
      assert.equal(without.message, 'Authentication failed');
      assert.match(
        without.detail ?? '',
        /Quarry: Set API Key/,
        'the editor points at its command, not at environment variables',
      );

      await vscode.commands.executeCommand('quarry.setApiKey', SECRET);
      assert.equal(await a.services.apiKeys.get(server.url), SECRET);
      assert.equal(await a.services.context.secrets.get(`quarry.apiKey:${new URL(server.url).origin}`), SECRET);
      const withKey = await testConnection();
      assert.equal(withKey.ok, true, withKey.detail);
      assert.match(withKey.message, /^connected, openai · replay-7b, \d+ ms$/, withKey.message);
      assert.equal(withKey.reply, 'OK');
      const sent = server.requests.filter((r) => r.path.endsWith('/chat/completions')).pop();
      assert.ok(sent, 'the server saw the chat request');
      assert.equal(sent.authorization, `Bearer ${SECRET}`);

      // Never in settings.
      const cfg = vscode.workspace.getConfiguration('quarry');
      assert.ok(!JSON.stringify(Object.keys(cfg).map((k) => cfg.get(k))).includes(SECRET));

      assert.equal(await vscode.commands.executeCommand('quarry.clearApiKey', { quiet: true }), true);
      assert.equal(await a.services.apiKeys.get(server.url), undefined);
      assert.equal(await vscode.commands.executeCommand('quarry.clearApiKey', { quiet: true }), false);
      assert.equal((await testConnection()).message, 'Authentication failed');

      // Never in the log, though the log does record that a key was set and cleared.
      const logDir = a.services.context.logUri.fsPath;
      const logs = await until('the log mentions the cleared key', () => {
        const text = extensionLogs(logDir);
        return text.includes('API key cleared') ? text : undefined;
      });
      assert.match(logs, /API key set for http:\/\/127\.0\.0\.1/);
      assert.ok(!logs.includes(SECRET), 'the key is not in the log');
    },
  );

  test(
    'test connection names what is wrong: unknown model, ' + 'server down, invalid onnx directory, no vscode.lm model',
    async () => {
      await vscode.commands.executeCommand('quarry.setApiKey', SECRET);
      await setModel({ 'model.backend': 'openai', 'model.baseUrl': server.url, 'model.name': 'no-such-model' });
      const unknown = await testConnection();
      assert.equal(unknown.message, 'Unknown model');
      assert.match(unknown.detail ?? '', /replay-7b/);

      await setModel({ 'model.baseUrl': 'http://127.0.0.1:9/v1', 'model.name': 'x' });
      const down = await testConnection();
      assert.equal(down.message, 'Server down or unreachable', down.detail);

      const empty = mkdtempSync(join(tmpdir(), 'quarry-not-a-model-'));
      try {
        await setModel({ 'model.backend': 'onnx', 'model.onnxPath': empty });
        const onnx = await testConnection();
        assert.equal(onnx.message, 'ONNX model directory invalid', onnx.detail);
        assert.ok(onnx.detail?.includes(`${empty} has no `), onnx.detail);
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }

      await setModel({ 'model.backend': 'vscode-lm', 'model.onnxPath': undefined, 'model.name': undefined });
      const lms = vscode.lm ? await vscode.lm.selectChatModels() : [];
      const lm = await testConnection();
      if (lms.length === 0) {
        assert.equal(lm.message, 'No VS Code chat model', lm.detail);
      } else {
        // An editor with a chat model provider signed in: the adapter must reach it.
        assert.equal(lm.ok, true, lm.detail);
      }
    },
  );

  test(
    "the onnx backend runs the bundled tiny model; the loaded model is shared and a caller's close() keeps " +
      'it for the others',
    async () => {
      const a = await api();
      await setModel({
        'model.backend': 'onnx',
        'model.onnxPath': undefined,
        'model.baseUrl': undefined,
        'model.name': undefined,
      });
      const first = await testConnection();
      assert.equal(first.ok, true, first.detail);
      const m1 = await a.services.createModel();
      const m2 = await a.services.createModel();
      assert.match(m1.spec, /^onnx:.*tiny-sql$/);
      assert.equal(m2.spec, m1.spec);
      await m1.close();
      const r = await m2.generate({
        messages: [{ role: 'user', content: 'How many doctors are there?' }],
        sampling: { temperature: 0, maxTokens: 8 },
      });
      assert.ok(r.usage.completionTokens > 0 && r.usage.completionTokens <= 8, JSON.stringify(r.usage));
      assert.equal((await testConnection()).ok, true);
      await m2.close();
    },
  );

  test('with no model name, the openai backend uses the first model the server lists', async () => {
    await vscode.commands.executeCommand('quarry.setApiKey', SECRET);
    await setModel({ 'model.backend': 'openai', 'model.baseUrl': server.url, 'model.name': '' });
    const r = await testConnection();
    assert.equal(r.ok, true, r.detail);
    const sent = server.requests.filter((q) => q.path.endsWith('/chat/completions')).pop();
    assert.equal(sent?.body?.model, 'replay-7b');
  });
});

/**
 * A chat model as a VS Code language-model provider hands it out (code-server has no provider, and a real one such as
 * Copilot is a hosted service): the adapter under test is real and uses VS Code's own message and cancellation types.
 */
interface FakeCall {
  messages: vscode.LanguageModelChatMessage[];
  options: vscode.LanguageModelChatRequestOptions | undefined;
  token: vscode.CancellationToken;
}
function fakeLmChat(
  chunks: string[],
  opts: { chunkDelayMs?: number } = {},
): vscode.LanguageModelChat & { calls: FakeCall[]; delivered: number } {
  const calls: FakeCall[] = [];
  const chat = {
    name: 'Fake Chat',
    id: 'fake-chat-1',
    vendor: 'test',
    family: 'fake',
    version: '1',
    maxInputTokens: 100_000,
    calls,
    delivered: 0,
    sendRequest(
      messages: vscode.LanguageModelChatMessage[],
      options?: vscode.LanguageModelChatRequestOptions,
      token?: vscode.CancellationToken,
    ) {
      calls.push({ messages, options, token: token! });
      const list = chunks;
      async function* text(): AsyncGenerator<string> {
        for (const c of list) {
          if (token?.isCancellationRequested) return;
          await new Promise((r) => setTimeout(r, opts.chunkDelayMs ?? 1));
          chat.delivered++;
          yield c;
        }
      }
      return Promise.resolve({ text: text(), stream: text() } as unknown as vscode.LanguageModelChatResponse);
    },
    countTokens: () => Promise.resolve(0),
  };
  return chat as unknown as vscode.LanguageModelChat & { calls: FakeCall[]; delivered: number };
}

/** A message's text whether the host gives content as a string (older API) or as parts (newer). */
function messageText(m: vscode.LanguageModelChatMessage): string {
  const c = (m as unknown as { content: unknown }).content;
  if (typeof c === 'string') return c;
  return (c as { value?: unknown }[]).map((p) => (typeof p.value === 'string' ? p.value : '')).join('');
}

suite('models: the vscode.lm adapter', () => {
  test(
    'system prompt folded into the first user message; streamed text; stop string cut client-side and the ' +
      'request cancelled',
    async () => {
      const chat = fakeLmChat([
        '<think>count</think>\n<sql>SELECT count(*)',
        ' FROM doctor</s',
        'ql>',
        ' and more text',
        ' never wanted',
      ]);
      const model = createVscodeLmModel(chat);
      assert.equal(model.spec, 'vscode-lm:fake-chat-1');
      assert.equal(model.label, 'test · Fake Chat');
      const deltas: string[] = [];
      const res = await model.generate({
        messages: [
          { role: 'system', content: 'You are a SQL expert.' },
          { role: 'user', content: 'How many doctors?' },
        ],
        sampling: { temperature: 0, stop: ['</sql>', '</solution>'] },
        onText: (d) => deltas.push(d),
      });
      assert.equal(res.text, '<think>count</think>\n<sql>SELECT count(*) FROM doctor');
      assert.equal(deltas.join(''), res.text);
      assert.equal(res.stopString, '</sql>');
      assert.equal(res.stopStringSource, 'client');
      assert.equal(res.finishReason, 'stop');
      assert.equal(res.usageEstimated, true);
      assert.ok(res.usage.promptTokens > 0 && res.usage.completionTokens > 0);
      const call = chat.calls[0];
      assert.equal(call.messages.length, 1);
      assert.equal(call.messages[0].role, vscode.LanguageModelChatMessageRole.User);
      assert.equal(messageText(call.messages[0]), 'You are a SQL expert.\n\nHow many doctors?');
      assert.deepEqual(call.options?.modelOptions, { temperature: 0 });
      assert.equal(call.token.isCancellationRequested, true, 'the rest of the answer was cancelled');
      assert.equal(chat.delivered, 3, 'no chunk was read after the stop string');
    },
  );

  test('assistant and observation turns keep their roles; maxTokens ends with finishReason length', async () => {
    const chat = fakeLmChat(['a'.repeat(30), 'b'.repeat(30), 'c'.repeat(30)]);
    const res = await createVscodeLmModel(chat).generate({
      messages: [
        { role: 'user', content: 'Q' },
        { role: 'assistant', content: '<sql>SELECT 1</sql>' },
        { role: 'tool', content: '<observation>1</observation>' },
      ],
      sampling: { maxTokens: 10 },
    });
    assert.deepEqual(
      chat.calls[0].messages.map((m) => m.role),
      [
        vscode.LanguageModelChatMessageRole.User,
        vscode.LanguageModelChatMessageRole.Assistant,
        vscode.LanguageModelChatMessageRole.User,
      ],
    );
    assert.equal(res.finishReason, 'length');
    assert.equal(res.text, 'a'.repeat(30) + 'b'.repeat(30));
  });

  test('aborting cancels the VS Code request and rejects with AbortError; a timeout is a ModelError', async () => {
    const slow = fakeLmChat(
      Array.from({ length: 200 }, () => 'x'),
      { chunkDelayMs: 20 },
    );
    const ac = new AbortController();
    const seen: string[] = [];
    const p = createVscodeLmModel(slow).generate({
      messages: [{ role: 'user', content: 'Q' }],
      sampling: {},
      signal: ac.signal,
      onText: (d) => {
        seen.push(d);
        if (seen.length === 3) ac.abort();
      },
    });
    await assert.rejects(p, (e: unknown) => (e as Error).name === 'AbortError');
    assert.equal(slow.calls[0].token.isCancellationRequested, true);
    assert.ok(slow.delivered < 200);

    const slower = fakeLmChat(
      Array.from({ length: 200 }, () => 'x'),
      { chunkDelayMs: 20 },
    );
    await assert.rejects(
      createVscodeLmModel(slower).generate({
        messages: [{ role: 'user', content: 'Q' }],
        sampling: {},
        timeoutMs: 100,
      }),
      (e: unknown) => e instanceof ModelError && e.kind === 'timeout',
    );
    const before = new AbortController();
    before.abort();
    await assert.rejects(
      createVscodeLmModel(fakeLmChat(['x'])).generate({ messages: [], sampling: {}, signal: before.signal }),
      (e: unknown) => (e as Error).name === 'AbortError',
    );
  });

  test("VS Code's language-model errors become the core's error kinds", async () => {
    const cases: [vscode.LanguageModelError, string][] = [
      [vscode.LanguageModelError.NoPermissions('consent was not given'), 'auth'],
      [vscode.LanguageModelError.Blocked('quota'), 'rate-limit'],
      [vscode.LanguageModelError.NotFound('gone'), 'unknown-model'],
    ];
    for (const [err, kind] of cases) {
      const chat = fakeLmChat([]);
      (chat as unknown as { sendRequest: () => Promise<never> }).sendRequest = () => Promise.reject(err);
      await assert.rejects(
        createVscodeLmModel(chat).generate({ messages: [{ role: 'user', content: 'Q' }], sampling: {} }),
        (e: unknown) => e instanceof ModelError && e.kind === kind && e.message.includes('Fake Chat'),
        kind,
      );
    }
  });
});
