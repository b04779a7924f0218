// One generation, inside the worker: chat template -> token ids -> prefill -> one token per step until an
// end-of-sequence token, a stop string, the token budget, the context length or an abort.
import { Tokenizer } from '@huggingface/tokenizers';
import { Template } from '@huggingface/jinja';
import { ModelError, type ChatMessage, type SamplingOptions } from '../types';
import type { Decoder } from './decoder';
import type { ModelFiles } from './files';
import type { JobResult } from './messages';
import { sampleToken, seededRandom } from './sampler';
import { findStop, safeLength } from './stops';

/** Used when neither the request nor generation_config.json says how many tokens to generate. */
export const FALLBACK_MAX_TOKENS = 512;

export class Aborted extends Error {
  constructor() { super('generation aborted'); this.name = 'AbortError'; }
}

export interface Hooks {
  /** Checked before each step. */
  aborted(): boolean;
  onText(delta: string): void;
}

function tokenString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const content = (value as { content?: unknown } | null)?.content;
  return typeof content === 'string' ? content : undefined;
}

export class Generator {
  private readonly tokenizer: Tokenizer;
  private readonly template: Template;
  private readonly eos: Set<number>;

  constructor(private readonly files: ModelFiles, private readonly decoder: Decoder) {
    try {
      this.tokenizer = new Tokenizer(files.tokenizerJson as never, files.tokenizerConfig as never);
    } catch (err) {
      throw new ModelError('load', `tokenizer.json in ${files.dir} could not be loaded: ${(err as Error).message}`);
    }
    try {
      this.template = new Template(files.chatTemplate);
    } catch (err) {
      throw new ModelError('load', `the chat template of ${files.dir} does not parse: ${(err as Error).message}`);
    }
    this.eos = new Set(files.eosIds);
  }

  /** The prompt's token ids, as the model sees them. */
  encodePrompt(messages: ChatMessage[]): number[] {
    const cfg = this.files.tokenizerConfig;
    const text = this.template.render({
      messages,
      add_generation_prompt: true,
      bos_token: tokenString(cfg.bos_token) ?? '',
      eos_token: tokenString(cfg.eos_token) ?? '',
    });
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: number[]): string {
    return this.tokenizer.decode(ids, { skip_special_tokens: true });
  }

  async run(messages: ChatMessage[], sampling: SamplingOptions, hooks: Hooks): Promise<JobResult> {
    const started = performance.now();
    const prompt = this.encodePrompt(messages);
    const encodeMs = performance.now() - started;
    const limit = this.files.shape.maxPositions;
    if (prompt.length >= limit) {
      throw new ModelError('server', `the prompt is ${prompt.length} tokens; this model's context is ${limit} tokens`);
    }
    const maxTokens = Math.max(0, Math.min(
      sampling.maxTokens ?? this.files.defaultMaxTokens ?? FALLBACK_MAX_TOKENS, limit - prompt.length));
    const stops = (sampling.stop ?? []).filter((s) => s.length > 0);
    const pick = {
      temperature: sampling.temperature ?? 0,
      topP: sampling.topP ?? 1,
      random: seededRandom(sampling.seed ?? 0),
    };

    const generated: number[] = [];
    let text = '';
    let shown = 0;
    let runMs = 0;
    let prefillMs = 0;
    let firstTokenMs: number | null = null;
    let finishReason: JobResult['finishReason'] = 'length';
    let stopString: string | null = null;
    const emit = (upTo: number) => {
      if (upTo > shown) { hooks.onText(text.slice(shown, upTo)); shown = upTo; }
    };

    this.decoder.reset();
    let next: number[] = prompt;
    while (generated.length < maxTokens) {
      if (hooks.aborted()) throw new Aborted();
      const t0 = performance.now();
      const { logits, vocab } = await this.decoder.step(next);
      const ran = performance.now() - t0;
      runMs += ran;
      if (generated.length === 0) prefillMs = ran;
      const token = sampleToken(logits, 0, vocab, pick);
      if (firstTokenMs === null) firstTokenMs = performance.now() - started;
      if (this.eos.has(token)) { finishReason = 'stop'; break; }
      generated.push(token);
      const before = text.length;
      text = this.decode(generated);
      const hit = stops.length ? findStop(text, stops, before) : null;
      if (hit) {
        text = text.slice(0, hit.index);
        finishReason = 'stop';
        stopString = hit.stop;
        break;
      }
      emit(safeLength(text, stops));
      next = [token];
    }
    if (hooks.aborted()) throw new Aborted();
    emit(text.length);
    return {
      text, finishReason, stopString,
      onnx: {
        promptTokens: prompt.length, completionTokens: generated.length, encodeMs, prefillMs,
        decodeRunMs: runMs - prefillMs, runMs, loopMs: performance.now() - started, firstTokenMs,
      },
    };
  }
}
