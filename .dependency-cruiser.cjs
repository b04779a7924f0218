// Import directions, checked by `npm test` (depcruise): core <- app <- {cli, extension}; protocol <- {extension,
// webview}; nothing imports test/; no import cycles. A wrong-way import fails the tests with the rule's name and the
// offending edge.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-is-the-bottom',
      comment: 'src/core is the engine: it imports no other layer of Quarry, and never vscode.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^(src/(app|cli|extension|protocol)/|webview/|test/)|^vscode$' },
    },
    {
      name: 'app-has-no-ui',
      comment: 'src/app holds the use cases the CLI, the editor and the environment server share: no vscode, no UI.',
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '^(src/(cli|extension|protocol)/|webview/|test/)|^vscode$' },
    },
    {
      name: 'protocol-is-wire-types',
      comment: 'src/protocol is what host and webviews say to each other: it may use core types, nothing above.',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: '^(src/(app|cli|extension)/|webview/|test/)|^vscode$' },
    },
    {
      name: 'cli-is-not-the-editor',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^(src/(extension|protocol)/|webview/|test/)|^vscode$' },
    },
    {
      name: 'extension-talks-to-webviews-through-protocol',
      comment: 'The host never imports a webview app; both sides import src/protocol.',
      severity: 'error',
      from: { path: '^src/extension/' },
      to: { path: '^(webview/|src/cli/|test/)' },
    },
    {
      name: 'webviews-see-only-protocol',
      comment:
        'A webview app imports its own folder, webview/shared, src/protocol and pure core helpers it shares with '
        + 'the host (a core module that needs Node fails the browser bundle): never the host, app or CLI.',
      severity: 'error',
      from: { path: '^webview/' },
      to: { path: '^(src/(app|cli|extension)/|test/)|^vscode$' },
    },
    {
      name: 'webview-apps-are-separate',
      comment: 'Each webview app is its own page: shared code lives in webview/shared or src/protocol.',
      severity: 'error',
      from: { path: '^webview/([^/]+)/' },
      to: { path: '^webview/', pathNot: ['^webview/$1/', '^webview/shared/'] },
    },
    {
      name: 'no-cycles',
      comment:
        'No module reaches itself through its imports, anywhere in src, webview, test or bench (a lazy '
        + '`await import()` is an edge too): what two modules both need goes into a third that imports neither.',
      severity: 'error',
      from: { path: '^(src|webview|test|bench)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(out|dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
  },
};
