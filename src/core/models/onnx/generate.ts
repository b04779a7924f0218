// One generation, inside the worker: chat template -> token ids -> prefill -> one token per step until an
// end-of-sequence token, a stop string, the token budget, the context length or an abort.
import { ModelError, type ChatMessage, type SamplingOptions } from '../types';
import type { Decoder } from './decoder';
import type { ModelFiles } from './files';
import type { JobResult } from './messages';
import { sampleToken } from './sampler';
import { seededRandom } from '../../util/random';
import { findStop, safeLength } from '../stops';
import { PromptEncoder } from './prompt';

/** Used when neither the request nor generation_config.json says how many tokens to generate. */
const FALLBACK_MAX_TOKENS = 512;

export class Aborted extends Error {
  constructor() {
    super('generation aborted');
    this.name = 'AbortError';
  }
}

interface Hooks {
  /** Checked before each step. */
  aborted(): boolean;
  onText(delta: string): void;
}

export class Generator {
  private readonly eos: Set<number>;
  readonly prompts: PromptEncoder;

  constructor(
    private readonly files: ModelFiles,
    private readonly decoder: Decoder,
  ) {
    this.prompts = new PromptEncoder(files);
    this.eos = new Set(files.eosIds);
  }

  async run(messages: ChatMessage[], sampling: SamplingOptions, hooks: Hooks): Promise<JobResult> {
    const started = performance.now();
    const prompt = this.prompts.encodeMessages(messages);
    const encodeMs = performance.now() - started;
    const limit = this.files.shape.maxPositions;
    if (prompt.length >= limit) {
      throw new ModelError('server', `the prompt is ${prompt.length} tokens; this model's context is ${limit} tokens`);
    }
    const maxTokens = Math.max(
      0,
      Math.min(sampling.maxTokens ?? this.files.defaultMaxTokens ?? FALLBACK_MAX_TOKENS, limit - prompt.length),
    );
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
      if (upTo > shown) {
        hooks.onText(text.slice(shown, upTo));
        shown = upTo;
      }
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
      if (this.eos.has(token)) {
        finishReason = 'stop';
        break;
      }
      generated.push(token);
      const before = text.length;
      text = this.prompts.decode(generated);
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
      text,
      finishReason,
      stopString,
      tokens: generated,
      onnx: {
        promptTokens: prompt.length,
        completionTokens: generated.length,
        encodeMs,
        prefillMs,
        decodeRunMs: runMs - prefillMs,
        runMs,
        loopMs: performance.now() - started,
        firstTokenMs,
      },
    };
  }
}
