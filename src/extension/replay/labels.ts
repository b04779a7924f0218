// The replay list's label column: the reviewer's label from the workspace label store (.quarry/labels.sqlite, written
// by the labeling panel) as "verdict · tag · tag", else the producer's own `meta.label`. The store is only read, and
// only when it exists: opening the replay never creates it.
import { existsSync } from 'node:fs';
import type { Services } from '../services';
import type { Label } from '../../core/labels/types';
import type { LabelStore } from '../../core/labels/store';
import { labelStoreFile } from '../labeling/index';
import { metaLabels, type LabelLookup } from './source';

/** One short text per label for the list and the label filter: verdict first, then the failure-mode tags. */
function labelText(l: Pick<Label, 'verdict' | 'tags' | 'note'>): string | null {
  const parts = [l.verdict, ...l.tags].filter((p): p is string => !!p);
  if (parts.length) return parts.join(' · ');
  return l.note.trim() ? 'note' : null;
}

export function storeLabels(services: Services): LabelLookup {
  return async (records) => {
    const out = await metaLabels(records);
    const path = labelStoreFile(services);
    if (!existsSync(path)) return out;
    const { LabelStore } = await import('../../core/labels/store');
    let store: LabelStore | null = null;
    try {
      store = LabelStore.open(path);
      for (const [id, label] of store.getMany(records.map((r) => r.id))) {
        const text = labelText(label);
        if (text) out.set(id, text);
      }
    } catch (err) {
      services.log.warn(`replay: labels not read from ${path}: ${(err as Error).message}`);
    } finally {
      store?.close();
    }
    return out;
  };
}
