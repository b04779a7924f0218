// The review queue's order: which trajectories of a file a reviewer goes through, and in what order. Computed once
// when the queue opens (or its filter changes), so labeling an item does not move the items around it.
import type { Label } from './types';

export type QueueFilter = 'unlabeled-first' | 'unlabeled' | 'labeled' | 'incorrect' | 'unsure' | 'all';

/** "Labeled" means: has a verdict (a label with only a note or tags is still to be decided). */
const isLabeled = (l: Label | undefined): boolean => !!l && l.verdict !== null;

/** Indices into `ids` (file order) that the filter keeps, in review order. */
export function orderQueue(ids: readonly string[], labels: ReadonlyMap<string, Label>, filter: QueueFilter): number[] {
  const all = ids.map((_, i) => i);
  const labeled = (i: number) => isLabeled(labels.get(ids[i]));
  switch (filter) {
    case 'all':
      return all;
    case 'unlabeled':
      return all.filter((i) => !labeled(i));
    case 'labeled':
      return all.filter(labeled);
    case 'incorrect':
      return all.filter((i) => labels.get(ids[i])?.verdict === 'incorrect');
    case 'unsure':
      return all.filter((i) => labels.get(ids[i])?.verdict === 'unsure');
    case 'unlabeled-first':
      return [...all.filter((i) => !labeled(i)), ...all.filter(labeled)];
  }
}
