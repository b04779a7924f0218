// The one interface every model backend implements (openai, onnx; the editor adds vscode.lm). The agent loop only
// ever sees this, so a protocol works the same against a hosted server, a local ONNX model or a replay server.

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface SamplingOptions {
  /** 0 means greedy. */
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** Generation stops before any of these; whether the stop string itself is returned is reported in `stopString`. */
  stop?: string[];
  seed?: number;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export type FinishReason = 'stop' | 'length' | 'abort' | 'error';

export interface GenerateRequest {
  messages: ChatMessage[];
  sampling: SamplingOptions;
  /** Aborting rejects the call with an AbortError (name 'AbortError') and frees the backend's resources. */
  signal?: AbortSignal;
  /** Called with each new piece of text as it arrives, when the backend streams. */
  onText?: (delta: string) => void;
  /** Per-call wall-clock limit, ms; past it the call rejects with a ModelError of kind 'timeout'. */
  timeoutMs?: number;
}

export interface GenerateResult {
  /** The generated text, without the stop string (OpenAI-compatible servers strip it; local backends do the same). */
  text: string;
  finishReason: FinishReason;
  /** The stop string that ended generation, when the backend knows it (null when it does not, or none matched). */
  stopString: string | null;
  usage: TokenUsage;
  timings: { totalMs: number; firstTokenMs: number | null };
  /** True when the backend did not report token usage and `usage` is an estimate (about 4 characters a token). */
  usageEstimated?: boolean;
  /**
   * True when the response passed the backend's size cap (maxResponseChars): reading stopped there, `text` holds the
   * part before the cap and finishReason is 'length'.
   */
  overLong?: boolean;
  /**
   * How `stopString` was found: 'server' (the server named it, as vLLM's `stop_reason` does), 'client' (cut on this
   * side, e.g. stop strings beyond a server's limit) or 'inferred' (the only plausible one). Absent when null.
   */
  stopStringSource?: 'server' | 'client' | 'inferred';
  /** HTTP attempts the call took (1 when there was no retry); set by network backends. */
  attempts?: number;
}

export interface ChatModel {
  /** The spec string it was made from, e.g. `openai:http://127.0.0.1:8000/v1#qwen` or `onnx:/path/to/dir`. */
  readonly spec: string;
  generate(req: GenerateRequest): Promise<GenerateResult>;
  close(): Promise<void>;
}

export type ModelErrorKind =
  | 'unreachable'
  | 'unknown-model'
  | 'auth'
  | 'rate-limit'
  | 'server'
  | 'timeout'
  | 'bad-response'
  | 'bad-spec'
  | 'load';

/** A backend failure with a kind a UI can act on and a message a person can read. */
export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}
