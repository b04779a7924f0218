// Finding and reading recipe files: the built-in ones in trainer/recipes/<name>.yaml (beside dist/ in a checkout or
// a packaged extension) and any file a user gives. YAML is read with js-yaml; validation is core/training/recipe.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { load, YAMLException } from 'js-yaml';
import { validateRecipe, type Assignment, type Recipe } from '../../core/training/recipe';
import { splitAssignment } from '../../core/training/recipe';

export class RecipeError extends Error {
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(problems.length > 0 ? `${message}\n  ${problems.join('\n  ')}` : message);
    this.name = 'RecipeError';
  }
}

/** trainer/recipes, looked for from `start` upwards (dist/ → the checkout or the extension folder). */
function builtinRecipesDir(start: string = __dirname): string | null {
  let dir = resolve(start);
  for (;;) {
    const candidate = join(dir, 'trainer', 'recipes');
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

export function listBuiltinRecipes(dir: string | null = builtinRecipesDir()): { name: string; file: string }[] {
  if (!dir) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ name: f.replace(/\.yaml$/, ''), file: join(dir, f) }));
}

/** Parses YAML text; a syntax error names the line and column. */
function parseYaml(text: string, where: string): unknown {
  try {
    return load(text, { filename: where });
  } catch (err) {
    if (err instanceof YAMLException) {
      const at = err.mark ? `:${err.mark.line + 1}:${err.mark.column + 1}` : '';
      throw new RecipeError(`${where}${at}: not valid YAML: ${err.reason}`);
    }
    throw err;
  }
}

/** A built-in recipe's name, or a path to a recipe file (relative to `cwd`). */
export function readRecipe(nameOrFile: string, cwd: string, dir: string | null = builtinRecipesDir()): Recipe {
  const looksLikeFile = /[/\\]/.test(nameOrFile) || /\.ya?ml$/i.test(nameOrFile);
  let file: string;
  if (looksLikeFile) {
    file = isAbsolute(nameOrFile) ? nameOrFile : resolve(cwd, nameOrFile);
    if (!existsSync(file)) throw new RecipeError(`no recipe file at ${file}`);
  } else {
    const found = listBuiltinRecipes(dir).find((r) => r.name === nameOrFile);
    if (!found) {
      const names = listBuiltinRecipes(dir).map((r) => r.name);
      throw new RecipeError(
        `no built-in recipe '${nameOrFile}' (${
          names.length > 0 ? `built-in: ${names.join(', ')}` : 'trainer/recipes/ was not found beside this quarry'
        }); a recipe file is given by its path`,
      );
    }
    file = found.file;
  }
  const { recipe, problems } = validateRecipe(parseYaml(readFileSync(file, 'utf8'), file), file);
  if (!recipe) throw new RecipeError(`${file} is not a valid recipe:`, problems);
  return recipe;
}

/** `--set key=value` arguments, each value read as YAML (`1e-6` a number, `true` a boolean, `[a, b]` a list). */
export function parseAssignments(args: readonly string[]): Assignment[] {
  return args.map((arg) => {
    const split = splitAssignment(arg);
    if (!split) throw new RecipeError(`--set ${arg}: expected key=value`);
    const text = split.text.trim();
    return { key: split.key, value: text === '' ? '' : parseYaml(text, `--set ${split.key}`) };
  });
}
