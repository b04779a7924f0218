// The job panel's log: both streams at once, stdout and stderr each in its own box with its line count — a failed
// job's traceback is in stderr while its stdout is often empty, so neither may hide behind a picker.
import type { LogStream } from '../../src/protocol/jobs';
import { logSections } from './logSections';

/**
 * Fills `box` with the heading and both streams (`#log-stdout`, `#log-stderr`, each scrolled to its end); the one to
 * focus with the `l` key is `#log-tail`: stderr when it has lines, else stdout.
 */
export function renderLogView(box: HTMLElement, logs: Record<LogStream, readonly string[]>): void {
  const doc = box.ownerDocument;
  const focusOn: LogStream = logs.stderr.length > 0 ? 'stderr' : 'stdout';
  const parts: HTMLElement[] = [];
  const heading = doc.createElement('h2');
  heading.textContent = 'Log';
  parts.push(heading);
  const pres: HTMLElement[] = [];
  for (const s of logSections(logs)) {
    const title = doc.createElement('h3');
    title.textContent = s.title;
    const pre = doc.createElement('pre');
    pre.className = 'j-log';
    pre.tabIndex = 0;
    pre.id = s.stream === focusOn ? 'log-tail' : `log-${s.stream}`;
    pre.dataset.stream = s.stream;
    pre.setAttribute('aria-label', `${s.stream} tail`);
    pre.textContent = s.text;
    parts.push(title, pre);
    pres.push(pre);
  }
  box.replaceChildren(...parts);
  for (const pre of pres) pre.scrollTop = pre.scrollHeight;
}
