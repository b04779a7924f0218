export type * from './types';
export type * from './protocol';
