// What the job panel's log shows, without the DOM (so the host-side unit tests import it): stdout then stderr, each
// titled with its line count.
import type { LogStream } from '../../src/protocol/jobs';

interface LogSection {
  stream: LogStream;
  title: string;
  text: string;
}

/** The sections shown: stdout then stderr, each with its last lines (or "(empty)"). */
export function logSections(logs: Record<LogStream, readonly string[]>): LogSection[] {
  return (['stdout', 'stderr'] as const).map((stream) => {
    const n = logs[stream].length;
    return {
      stream,
      title: `${stream} (${n} line${n === 1 ? '' : 's'})`,
      text: logs[stream].join('\n') || '(empty)',
    };
  });
}
