// The models an OpenAI-compatible server lists at GET <baseURL>/models, for the model picker and for picking a
// model when the setting names none. Pure Node (global fetch), so it is tested against a real loopback server.
import { ModelError } from '../../core/models/types';

interface ListModelsOptions {
  apiKey?: string;
  signal?: AbortSignal;
  /** Default 5 s: the picker waits on it. */
  timeoutMs?: number;
}

export async function listServerModels(baseUrl: string, opts: ListModelsOptions = {}): Promise<string[]> {
  const base = baseUrl.replace(/\/+$/, '');
  const url = `${base}/models`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? 5000);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal });
  } catch (err) {
    if (opts.signal?.aborted) {
      const e = new Error("listing the server's models was cancelled");
      e.name = 'AbortError';
      throw e;
    }
    if (timeout.aborted) throw new ModelError('timeout', `${url} did not answer within ${opts.timeoutMs ?? 5000} ms`);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new ModelError('unreachable', `cannot reach ${base} (${why}): is the server running?`);
  }
  if (res.status === 401 || res.status === 403) {
    throw new ModelError(
      'auth',
      `${url} answered HTTP ${res.status}: ` +
        `${opts.apiKey ? 'the API key was refused' : 'it needs an API key (Quarry: Set API Key…)'}`,
    );
  }
  if (!res.ok) {
    throw new ModelError(
      res.status === 404 ? 'unreachable' : 'server',
      `${url} answered HTTP ${res.status}` +
        `${res.status === 404 ? ': OpenAI-compatible base URLs usually end in /v1' : ''}`,
    );
  }
  let json: unknown;
  try {
    json = await res.json();
  } catch {
    throw new ModelError('bad-response', `${url} did not answer with JSON: is ${base} an OpenAI-compatible server?`);
  }
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new ModelError('bad-response', `${url} answered without a "data" list of models`);
  return data.map((m) => (m as { id?: unknown } | null)?.id).filter((id): id is string => typeof id === 'string');
}
