// `npm test` step: fails, naming file:line and the name, for every exported symbol no other module imports (an export
// only its own file uses should lose `export`; one nothing uses should go). Reads the TypeScript and JavaScript under
// src/ webview/ test/ bench/ scripts/ with the TypeScript parser (syntax only, no type check): static, type-only,
// namespace (`ns.name`), re-exported (`export … from`, `export *`), dynamic (`const { a } = await import()`,
// `import().then(({ a }) => …)`), `import('…').T` types, JSDoc `import('…').T` and require() imports all count. A use
// from a test counts. Entry points are roots (their exports are used by whoever loads them): see ROOTS.
// scripts/unused-exports-allow.txt (`file name` a line) names exports left for work in flight to remove.
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const DIRS = ['src', 'webview', 'test', 'bench', 'scripts'];
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const DECLARATION = /\.d\.(ts|mts|cts)$/;

/** Files loaded by path or by a host, never imported: their exports are used by that loader. */
const ROOTS = [
  /^src\/extension\/extension\.ts$/, // VS Code calls activate/deactivate
  /^src\/cli\/(run|main)\.ts$/, // dist/cli.js, bin/quarry
  /^src\/core\/db\/sqlWorker\.ts$/, // the build's worker bundles (scripts/build.mjs), started by path
  /^src\/core\/models\/onnx\/worker\.ts$/,
  /^src\/core\/agent\/feedback\/judgeWorker\.ts$/,
  /^test\/support\/openaiReplayServer\.ts$/, // dist/replayServer.js
  /^webview\/[^/]+\/main\.ts$/, // each webview app's bundle
  /^bench\//, // benchmarks run as their own bundles
  /\.(test|spec|e2e)\.ts$/, // node --test and the editor test runners load these by path
  /^test\/integration\/[^/]*index\.ts$/, // @vscode/test-electron requires the suite's index and calls run()
];

function walk(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (SOURCE.test(name)) out.push(p);
  }
  return out;
}

const posix = (p) => p.split(sep).join('/');

/** The file a relative specifier names, as TypeScript with bundler resolution finds it; undefined when none. */
function resolveSpecifier(from, spec, files) {
  if (!spec.startsWith('.')) return undefined;
  const base = posix(join(dirname(from), spec));
  const stem = base.replace(/\.(js|mjs|cjs)$/, '');
  const candidates = [
    base,
    `${stem}.ts`,
    `${stem}.tsx`,
    `${stem}.mts`,
    `${stem}.cts`,
    `${base}.ts`,
    `${base}.tsx`,
    `${base}.mjs`,
    `${base}.js`,
    `${base}/index.ts`,
    `${base}/index.mjs`,
    `${base}/index.js`,
  ];
  return candidates.find((c) => files.has(c));
}

const hasExport = (node) => ts.getModifiers?.(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
const hasDefault = (node) => ts.getModifiers?.(node)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword) ?? false;

function bindingNames(name, out = []) {
  if (ts.isIdentifier(name)) out.push(name.text);
  else for (const el of name.elements) if (!ts.isOmittedExpression(el)) bindingNames(el.name, out);
  return out;
}

/** The property names an object binding pattern takes (`{ a, b: c }` → a, b); undefined when it has a rest element. */
function patternNames(pattern) {
  const names = [];
  for (const el of pattern.elements) {
    if (el.dotDotDotToken) return undefined;
    const key = el.propertyName ?? el.name;
    if (!ts.isIdentifier(key) && !ts.isStringLiteral(key)) return undefined;
    names.push(key.text);
  }
  return names;
}

/** What one module declares and uses: exports (name → line), forwards (`export … from`), and uses of other files. */
function readModule(file, text, files) {
  const kind = /\.(m|c)?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const exports = new Map();
  const forwards = []; // { name, target, from } — `export { from as name } from target`; name '*' is `export *`
  const uses = []; // { target, name } — name '*' means every export
  const namespaces = new Map(); // local name → target, for `import * as ns`
  const line = (node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const target = (spec) => resolveSpecifier(file, spec, files);
  const use = (spec, names) => {
    const t = target(spec);
    if (t) for (const name of names ?? ['*']) uses.push({ target: t, name });
  };

  /** The names taken from a dynamic import()/require() call, from what surrounds it; undefined means all of them. */
  function dynamicNames(call) {
    let node = call.parent;
    if (ts.isAwaitExpression(node)) node = node.parent;
    while (ts.isParenthesizedExpression(node)) node = node.parent;
    if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name)) return patternNames(node.name);
    if (ts.isPropertyAccessExpression(node) && node.name.text !== 'then') return [node.name.text];
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'then' && ts.isCallExpression(node.parent)) {
      const fn = node.parent.arguments[0];
      const param = fn && (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) ? fn.parameters[0] : undefined;
      if (param && ts.isObjectBindingPattern(param.name)) return patternNames(param.name);
    }
    return undefined;
  }

  function visit(node) {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      const clause = node.importClause;
      if (clause) {
        const names = [];
        if (clause.name) names.push('default');
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) {
          const t = target(spec);
          if (t) namespaces.set(bindings.name.text, t);
        } else if (bindings) for (const el of bindings.elements) names.push((el.propertyName ?? el.name).text);
        use(spec, names);
      }
    } else if (ts.isExportDeclaration(node)) {
      const spec = node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier.text : '';
      const t = spec ? target(spec) : undefined;
      if (!node.exportClause) {
        if (t) forwards.push({ name: '*', target: t, from: '*' });
      } else if (ts.isNamespaceExport(node.exportClause)) {
        exports.set(node.exportClause.name.text, line(node));
        if (t) forwards.push({ name: node.exportClause.name.text, target: t, from: '*' });
      } else {
        for (const el of node.exportClause.elements) {
          exports.set(el.name.text, line(el));
          if (t) forwards.push({ name: el.name.text, target: t, from: (el.propertyName ?? el.name).text });
        }
      }
    } else if (ts.isExportAssignment(node)) {
      exports.set('default', line(node));
    } else if (hasExport(node) && node.parent === sf) {
      if (hasDefault(node)) exports.set('default', line(node));
      else if (ts.isVariableStatement(node))
        for (const d of node.declarationList.declarations)
          for (const n of bindingNames(d.name)) exports.set(n, line(d));
      else if (node.name && ts.isIdentifier(node.name)) exports.set(node.name.text, line(node));
    } else if (ts.isCallExpression(node) && node.arguments.length >= 1 && ts.isStringLiteral(node.arguments[0])) {
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (isImport || isRequire) use(node.arguments[0].text, dynamicNames(node));
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const lit = node.argument.literal;
      if (ts.isStringLiteral(lit)) {
        let q = node.qualifier;
        while (q && ts.isQualifiedName(q)) q = q.left;
        use(lit.text, q ? [q.text] : undefined);
      }
    }
    ts.forEachChild(node, visit);
  }
  visit(sf);

  // `ns.name` (value or type) takes name; any other use of ns (passed on, spread) takes every export.
  if (namespaces.size) {
    const taken = new Map([...namespaces.keys()].map((k) => [k, new Set()]));
    const all = new Set();
    const scan = (node) => {
      if (ts.isIdentifier(node) && taken.has(node.text)) {
        const p = node.parent;
        if (ts.isPropertyAccessExpression(p) && p.expression === node) taken.get(node.text).add(p.name.text);
        else if (ts.isQualifiedName(p) && p.left === node) taken.get(node.text).add(p.right.text);
        else if (!ts.isNamespaceImport(p)) all.add(node.text);
      }
      ts.forEachChild(node, scan);
    };
    scan(sf);
    for (const [ns, t] of namespaces) {
      for (const name of all.has(ns) ? ['*'] : taken.get(ns)) uses.push({ target: t, name });
    }
  }
  // JSDoc types in JavaScript: `@type {import('./x').Name}`.
  for (const m of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)(?:\.([A-Za-z_$][\w$]*))?/g)) {
    if (kind === ts.ScriptKind.JS || m.index === undefined) use(m[1], m[2] ? [m[2]] : undefined);
  }
  return { exports, forwards, uses };
}

/** Every export under `root`'s DIRS that no other module uses: [{ file, line, name }], sorted. */
function unusedExports(root) {
  const all = DIRS.flatMap((d) => walk(join(root, d))).map((f) => posix(relative(root, f)));
  const files = new Set(all);
  const modules = new Map(all.map((f) => [f, readModule(f, readFileSync(join(root, f), 'utf8'), files)]));
  const used = new Map(all.map((f) => [f, new Set()]));
  const queue = [];
  const mark = (file, name) => {
    const set = used.get(file);
    if (!set || set.has(name) || set.has('*')) return;
    set.add(name);
    queue.push([file, name]);
  };
  for (const [file, mod] of modules) {
    if (ROOTS.some((r) => r.test(file))) mark(file, '*');
    for (const u of mod.uses) if (u.target !== file) mark(u.target, u.name);
  }
  // A used name of a module that forwards it is a use of the module it comes from.
  while (queue.length) {
    const [file, name] = queue.shift();
    for (const f of modules.get(file).forwards) {
      if (name === '*') mark(f.target, f.from === '*' ? '*' : f.from);
      else if (f.name === name) mark(f.target, f.from);
      else if (f.name === '*' && !modules.get(file).exports.has(name)) mark(f.target, name);
    }
  }
  const out = [];
  for (const [file, mod] of modules) {
    if (DECLARATION.test(file)) continue;
    const set = used.get(file);
    if (set.has('*')) continue;
    for (const [name, line] of mod.exports) if (!set.has(name)) out.push({ file, line, name });
  }
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/** The allowlist's entries (`file name`, one a line, `#` comments): exports being removed by work in flight. */
function readAllowlist(path) {
  if (!existsSync(path)) return new Set();
  return new Set(
    readFileSync(path, 'utf8')
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim().split(/\s+/).join(' '))
      .filter(Boolean),
  );
}

/** `node scripts/check-unused-exports.mjs [ROOT]` (default: this repository). */
function main(root = resolve(dirname(fileURLToPath(import.meta.url)), '..')) {
  const allow = readAllowlist(join(root, 'scripts', 'unused-exports-allow.txt'));
  const found = unusedExports(root);
  const unused = found.filter((u) => !allow.has(`${u.file} ${u.name}`));
  const stale = [...allow].filter((a) => !found.some((u) => `${u.file} ${u.name}` === a));
  if (stale.length) console.log(`scripts/unused-exports-allow.txt: no longer needed (remove): ${stale.join(', ')}`);
  if (unused.length === 0) {
    console.log('unused exports: none');
    return 0;
  }
  console.error(`${unused.length} export(s) nothing else imports (drop \`export\`, or the code if nothing uses it):`);
  for (const u of unused) console.error(`${u.file}:${u.line}: ${u.name}`);
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv[2] ? resolve(process.argv[2]) : undefined);
}
