// The stop strings a protocol's turns end at (`</sql>`, `</tool_call>` …), as its own session reports them for the
// first turn: SkyRL's generator needs them in its sampling parameters, and quarry serve-env restores the one a turn
// ended on. Read from a session on an empty task (with a gold, which Progress-SQL's oracle session needs), so the list
// stays the protocol module's.
import { getProtocol } from '../agent/protocols';
import type { ProtocolName } from '../agent/types';

export function protocolStops(name: ProtocolName): string[] {
  const protocol = getProtocol(name);
  const session = protocol.create({
    task: { question: '', dbPath: '', gold: 'SELECT 1' },
    config: { ...protocol.defaults },
    schema: { tables: [] },
    feedback: () => null,
  });
  return session.stop();
}
