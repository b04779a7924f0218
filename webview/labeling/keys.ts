// The labeling shortcuts outside text fields, without the DOM: which action a key means (SHORTCUTS in the protocol
// lists them for the help). Ctrl+Enter, Escape and the tag chips' own keys depend on the focus: keyboard.ts has them.
import type { Verdict } from '../../src/protocol/labeling';

type LabelAction =
  | { kind: 'move'; delta: 1 | -1 }
  | { kind: 'verdict'; verdict: Verdict }
  | { kind: 'editSql' }
  | { kind: 'tags' }
  | { kind: 'save' }
  | { kind: 'help' };

const ACTIONS: Record<string, LabelAction> = {
  j: { kind: 'move', delta: 1 },
  n: { kind: 'move', delta: 1 },
  ArrowDown: { kind: 'move', delta: 1 },
  k: { kind: 'move', delta: -1 },
  p: { kind: 'move', delta: -1 },
  ArrowUp: { kind: 'move', delta: -1 },
  '1': { kind: 'verdict', verdict: 'correct' },
  '2': { kind: 'verdict', verdict: 'incorrect' },
  '3': { kind: 'verdict', verdict: 'unsure' },
  e: { kind: 'editSql' },
  t: { kind: 'tags' },
  s: { kind: 'save' },
  '?': { kind: 'help' },
};

/** The action of a key pressed outside a text field without Ctrl, Meta or Alt; null when it is not a shortcut. */
export function keyAction(key: string): LabelAction | null {
  return Object.hasOwn(ACTIONS, key) ? ACTIONS[key] : null;
}
