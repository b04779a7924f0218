// The protocol registry: one place that maps a ProtocolName to its module.
import type { Protocol } from '../protocol';
import { PROTOCOL_NAMES, type ProtocolName } from '../types';
import { skyrlProtocol } from './skyrl';
import { sqlTrailProtocol } from './sqltrail';
import { mtirProtocol } from './mtir';
import { progressProtocol } from './progress';
import { mtsqlr1Protocol } from './mtsqlr1';

export { PROTOCOL_NAMES };

const registry: Record<ProtocolName, () => Protocol> = {
  skyrl: () => skyrlProtocol,
  sqltrail: () => sqlTrailProtocol,
  mtir: () => mtirProtocol,
  mtsqlr1: () => mtsqlr1Protocol,
  progress: () => progressProtocol,
};

/** Protocols that can answer a user's question (not progress, which needs gold-SQL feedback during training). */
export const ASK_PROTOCOL_NAMES: readonly ProtocolName[] = PROTOCOL_NAMES.filter((n) => !registry[n]().needsOracle);

export function isProtocolName(name: string): name is ProtocolName {
  return (PROTOCOL_NAMES as readonly string[]).includes(name);
}

/** The protocol module called `name`; an unknown name is an Error that lists the valid ones. */
export function getProtocol(name: ProtocolName | string): Protocol {
  if (!isProtocolName(name)) {
    throw new Error(`unknown protocol '${String(name)}'; valid protocols: ${PROTOCOL_NAMES.join(', ')}`);
  }
  return registry[name]();
}
