// Training recipes: one JSON file per paper in trainer/recipes/ (sql-trail, skyrl-sql, mtir-sql, mtsql-r1,
// progress-sql), holding every hyperparameter the paper states with the section it comes from, and every value the
// paper leaves open marked as Quarry's choice with the reason. A recipe is data: copy one and edit it. Every leaf is
// `{"value": …, "source": "§…"}` or `{"value": …, "choice": "why"}`; this module reads and checks them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROTOCOL_NAMES } from '../agent/types';

export const RECIPE_SCHEMA = 'quarry.recipe/1';

export interface Sourced<T = unknown> {
  value: T;
  /** Where the paper states it. */
  source?: string;
  /** Why Quarry chose it, when the paper does not say. */
  choice?: string;
}

export interface Recipe {
  schema: typeof RECIPE_SCHEMA;
  name: string;
  paper: string;
  protocol: Sourced<string>;
  panel: Sourced<string>;
  base_model: Sourced<string>;
  data: Record<string, Sourced>;
  sft: Record<string, Sourced> | null;
  rl: Record<string, Sourced>;
  eval: Record<string, Sourced>;
}

function isLeaf(v: unknown): v is Sourced {
  return !!v && typeof v === 'object' && !Array.isArray(v) && 'value' in (v as object);
}

/** Every problem of a recipe document, each naming its field (empty when it is sound). */
export function recipeProblems(doc: unknown): string[] {
  const problems: string[] = [];
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return ['a recipe is a JSON object'];
  const r = doc as Record<string, unknown>;
  if (r.schema !== RECIPE_SCHEMA) problems.push(`schema: expected "${RECIPE_SCHEMA}"`);
  if (typeof r.name !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(r.name))
    problems.push('name: lower-case letters, digits and dashes');
  if (typeof r.paper !== 'string' || r.paper === '') problems.push('paper: the paper it follows');
  const leaf = (path: string, v: unknown) => {
    if (!isLeaf(v)) {
      problems.push(`${path}: expected {"value", "source" | "choice"}`);
      return;
    }
    const hasSource = typeof v.source === 'string' && v.source.trim() !== '';
    const hasChoice = typeof v.choice === 'string' && v.choice.trim() !== '';
    if (hasSource === hasChoice)
      problems.push(
        `${path}: give exactly one of "source" (the paper's section) and "choice" (why, when the paper is silent)`,
      );
  };
  for (const k of ['protocol', 'panel', 'base_model'] as const) leaf(k, r[k]);
  if (isLeaf(r.protocol) && !(PROTOCOL_NAMES as readonly unknown[]).includes(r.protocol.value)) {
    problems.push(`protocol: one of ${PROTOCOL_NAMES.join(', ')}`);
  }
  for (const section of ['data', 'rl', 'eval', 'sft'] as const) {
    const s = r[section];
    if (section === 'sft' && s === null) continue;
    if (!s || typeof s !== 'object' || Array.isArray(s)) {
      problems.push(`${section}: an object of sourced values`);
      continue;
    }
    for (const [k, v] of Object.entries(s)) leaf(`${section}.${k}`, v);
  }
  return problems;
}

/** The recipes in `dir` by name (the file name without .json). */
export function listRecipes(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort();
}

/** A recipe by name (from `dir`) or by path; throws with every problem named. */
export function loadRecipe(nameOrPath: string, dir: string): Recipe {
  const path = nameOrPath.endsWith('.json') ? nameOrPath : join(dir, `${nameOrPath}.json`);
  if (!existsSync(path))
    throw new Error(`no recipe ${nameOrPath} (built in: ${listRecipes(dir).join(', ')}; or give a .json file)`);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path} is not JSON: ${(err as Error).message}`);
  }
  const problems = recipeProblems(doc);
  if (problems.length) throw new Error(`${path} is not a sound recipe: ${problems.join('; ')}`);
  return doc as Recipe;
}

/** The values a paper leaves open in a recipe, with Quarry's reasons: what a user may want to change first. */
export function choicesOf(recipe: Recipe): Array<{ field: string; value: unknown; choice: string }> {
  const out: Array<{ field: string; value: unknown; choice: string }> = [];
  const visit = (prefix: string, o: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(o)) {
      if (isLeaf(v)) {
        if (v.choice) out.push({ field: `${prefix}${k}`, value: v.value, choice: v.choice });
      } else if (v && typeof v === 'object' && !Array.isArray(v)) visit(`${prefix}${k}.`, v as Record<string, unknown>);
    }
  };
  visit('', recipe as unknown as Record<string, unknown>);
  return out;
}
