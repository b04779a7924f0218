// Types for the part of js-yaml (4.x, MIT) Quarry uses: reading recipe files (src/app/train/recipes.ts). The package
// ships no declarations and @types/js-yaml is not installed.
declare module 'js-yaml' {
  export interface Mark {
    line: number;
    column: number;
  }
  export class YAMLException extends Error {
    reason: string;
    mark?: Mark;
  }
  export interface LoadOptions {
    filename?: string;
    json?: boolean;
  }
  export function load(text: string, options?: LoadOptions): unknown;
}
