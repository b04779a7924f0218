// The webview side of one typed message channel. Each app passes its own protocol's message unions, so a message
// the host does not understand is a compile error here and a validation error there.
interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export interface Host<ToHost, ToApp, State> {
  post(message: ToHost): void;
  onMessage(handler: (message: ToApp) => void): void;
  /** Survives the panel being hidden and shown again (and a reload while VS Code keeps the panel). */
  state(): State | undefined;
  saveState(state: State): void;
}

let api: VsCodeApi | undefined;

export function connectHost<ToHost, ToApp extends { type: string }, State>(): Host<ToHost, ToApp, State> {
  api ??= acquireVsCodeApi();
  const vs = api;
  return {
    post: (m) => vs.postMessage(m),
    onMessage: (handler) =>
      window.addEventListener('message', (e: MessageEvent) => {
        const data = e.data as { type?: unknown } | null;
        // Messages from the host always carry a string `type`; anything else is not ours.
        if (data && typeof data === 'object' && typeof data.type === 'string') handler(data as ToApp);
      }),
    state: () => (vs.getState() as State | undefined) ?? undefined,
    saveState: (s) => vs.setState(s),
  };
}
