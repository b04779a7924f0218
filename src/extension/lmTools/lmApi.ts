// VS Code's language-model tools API (vscode.lm.registerTool / tools / invokeTool, LanguageModelToolResult,
// LanguageModelTextPart: final since VS Code 1.95), reached by feature detection. The extension still runs on
// 1.90–1.94 (engines.vscode) without the tools, and this file is the one place that names the API's shapes, so the
// rest compiles against the @types/vscode the project pins (1.90, which predates them).
import * as vscode from 'vscode';

export interface PreparedToolInvocation {
  invocationMessage?: string | vscode.MarkdownString;
  confirmationMessages?: { title: string; message: string | vscode.MarkdownString };
}

interface ToolInvocationOptions {
  input: unknown;
  /** The chat request's token when a chat participant calls the tool; undefined otherwise. */
  toolInvocationToken: unknown;
}

interface LanguageModelToolImpl {
  prepareInvocation(
    options: { input: unknown },
    token: vscode.CancellationToken,
  ): PreparedToolInvocation | Thenable<PreparedToolInvocation>;
  invoke(options: ToolInvocationOptions, token: vscode.CancellationToken): Thenable<unknown>;
}

interface LanguageModelToolInfo {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: object | undefined;
  readonly tags: readonly string[];
}

export interface LmToolsApi {
  registerTool(name: string, tool: LanguageModelToolImpl): vscode.Disposable;
  readonly tools: readonly LanguageModelToolInfo[];
  invokeTool(
    name: string,
    options: { input: object; toolInvocationToken: undefined },
    token?: vscode.CancellationToken,
  ): Thenable<{ content: unknown[] }>;
  /** A result holding one text part. */
  textResult(text: string): unknown;
  /** The text parts of a result, joined. */
  resultText(result: { content: unknown[] }): string;
}

type Ctor<T> = new (...args: never[]) => T;

/** The API, or null in an editor without it. */
export function lmToolsApi(): LmToolsApi | null {
  const lm = (vscode as { lm?: unknown }).lm as
    | (Pick<LmToolsApi, 'registerTool' | 'tools' | 'invokeTool'> & Record<string, unknown>)
    | undefined;
  const ns = vscode as unknown as Record<string, unknown>;
  const Result = ns.LanguageModelToolResult as Ctor<{ content: unknown[] }> | undefined;
  const TextPart = ns.LanguageModelTextPart as Ctor<{ value: string }> | undefined;
  if (!lm || typeof lm.registerTool !== 'function' || typeof lm.invokeTool !== 'function' || !Result || !TextPart)
    return null;
  const NewResult = Result as unknown as new (parts: unknown[]) => { content: unknown[] };
  const NewText = TextPart as unknown as new (value: string) => { value: string };
  return {
    registerTool: (name, tool) => lm.registerTool(name, tool),
    get tools() {
      return lm.tools;
    },
    invokeTool: (name, options, token) => lm.invokeTool(name, options, token),
    textResult: (text) => new NewResult([new NewText(text)]),
    resultText: (result) =>
      result.content
        .map((p) =>
          p instanceof NewText
            ? p.value
            : typeof (p as { value?: unknown }).value === 'string'
              ? (p as { value: string }).value
              : '',
        )
        .join(''),
  };
}
