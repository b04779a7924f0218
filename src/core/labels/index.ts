// Labels: the workspace label store (SQLite, WAL) and the SFT / RL-prompt exporters that read it.
export * from './types';
export { LabelStore } from './store';
