// What "Test Model Connection" tells the user when a backend fails: a plain title per failure kind, the backend's own
// detail, and the actions that fix it. Pure, so every case is unit-tested without VS Code.
import type { ModelErrorKind } from '../../core/models/types';
import type { ModelBackend } from '../settings';

export type FixAction = 'Set API Key…' | 'Switch Model…' | 'Open Settings' | 'Open Log';

interface ConnectionReport {
  title: string;
  detail: string;
  actions: FixAction[];
}

function kindOf(err: unknown): ModelErrorKind | 'abort' | 'other' {
  if (err instanceof Error && err.name === 'AbortError') return 'abort';
  const kind = (err as { kind?: unknown } | null)?.kind;
  return err instanceof Error && err.name === 'ModelError' && typeof kind === 'string'
    ? (kind as ModelErrorKind)
    : 'other';
}

export function describeConnectionFailure(backend: ModelBackend, err: unknown): ConnectionReport {
  const detail = err instanceof Error ? err.message : String(err);
  const kind = kindOf(err);
  switch (kind) {
    case 'abort':
      return { title: 'Connection test cancelled', detail, actions: [] };
    case 'unreachable':
      return { title: 'Server down or unreachable', detail, actions: ['Open Settings', 'Open Log'] };
    case 'unknown-model':
      return backend === 'vscode-lm'
        ? { title: 'No VS Code chat model', detail, actions: ['Switch Model…'] }
        : { title: 'Unknown model', detail, actions: ['Switch Model…', 'Open Settings'] };
    case 'auth':
      return backend === 'openai'
        ? { title: 'Authentication failed', detail, actions: ['Set API Key…', 'Open Log'] }
        : { title: 'Not allowed to use this model', detail, actions: ['Switch Model…'] };
    case 'rate-limit':
      return { title: 'Rate-limited or quota exhausted', detail, actions: ['Open Log'] };
    case 'timeout':
      return { title: 'The model did not answer in time', detail, actions: ['Open Settings', 'Open Log'] };
    case 'load':
      return backend === 'onnx'
        ? { title: 'ONNX model directory invalid', detail, actions: ['Switch Model…', 'Open Settings'] }
        : { title: 'The model backend could not be loaded', detail, actions: ['Open Log'] };
    case 'bad-spec':
      return { title: 'Model settings invalid', detail, actions: ['Open Settings'] };
    case 'bad-response':
      return {
        title: 'The server answered in a way Quarry does not understand',
        detail,
        actions: ['Open Settings', 'Open Log'],
      };
    case 'server':
      return { title: 'The model failed', detail, actions: ['Open Log'] };
    default:
      return { title: 'Unexpected error', detail, actions: ['Open Log'] };
  }
}

/**
 * The core names environment variables when a server wants a key; the editor never reads them (keys live in
 * SecretStorage), so its messages point at the command instead.
 */
export function withEditorKeyHint(message: string): string {
  return message.replace(
    /\(set QUARRY_API_KEY or OPENAI_API_KEY\)/g,
    '(run "Quarry: Set API Key…" to store one for this server)',
  );
}

/** What a passing connection test says: that it connected, to which model, and how long the round trip took. */
export function connectedText(model: string, ms: number): string {
  return `connected, ${model}, ${Math.round(ms)} ms`;
}
