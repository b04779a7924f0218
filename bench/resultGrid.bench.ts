// The result grid (webview/shared/resultGrid.ts) in a real browser: Debian's Chromium, headless, through
// playwright-core. For results of 1,000 / 10,000 / 100,000 rows × 6 mixed columns it measures, inside the page, the
// time to build and lay out the grid, to sort by a text column and reverse it, to turn a page, and to build the
// clipboard text of every row; and, for contrast, laying out the same rows as one full table (what the grid avoids).
// Needs Chromium (QUARRY_CHROMIUM, default /usr/bin/chromium); esbuild and playwright-core load from node_modules.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repoRoot, writeResult, percentile } from './common';

const SIZES = (process.env.GRID_BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const REPEATS = 5;
const chromiumPath = process.env.QUARRY_CHROMIUM ?? '/usr/bin/chromium';

// Loaded at run time from the repository's node_modules: neither can be bundled (native binary, huge driver).
const req = createRequire(join(repoRoot, 'package.json'));

interface Timings {
  build: number;
  sortAsc: number;
  sortDesc: number;
  nextPage: number;
  copyAll: number;
  fullTable: number | null;
  copyChars: number;
}

async function main(): Promise<void> {
  if (!existsSync(chromiumPath)) {
    console.error(
      `bench resultGrid: Chromium not found at ${chromiumPath} (set QUARRY_CHROMIUM; on Debian: apt-get ` +
        `install chromium)`,
    );
    process.exit(2);
  }
  const esbuild = req('esbuild') as typeof import('esbuild');
  const { chromium } = req('playwright-core') as typeof import('playwright-core');
  const bundle = await esbuild.build({
    stdin: {
      contents:
        "import { resultGrid } from './webview/shared/resultGrid'; import { table } from " +
        "'./webview/shared/components'; Object.assign(window, { resultGrid, fullTable: table });",
      resolveDir: repoRoot,
      loader: 'ts',
      sourcefile: 'grid-bench-entry.ts',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'warning',
  });
  const script = bundle.outputFiles[0].text;
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
  const results: Record<string, unknown>[] = [];
  try {
    for (const n of SIZES) {
      const runs: Timings[] = [];
      for (let r = 0; r < REPEATS; r++) {
        // A fresh page per run, so one run's garbage (the full table is large) is not collected during the next.
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        await page.setContent('<!DOCTYPE html><html><body><div id="app"></div></body></html>');
        await page.addScriptTag({ content: script });
        // The full-table contrast is skipped at 100,000 rows: it takes long enough to dominate the run.
        runs.push(
          await page.evaluate(
            ({ n, withFull }) => {
              type Cell = null | number | string;
              const w = window as unknown as {
                resultGrid: (
                  c: string[],
                  rows: Cell[][],
                  o: { onCopy: (t: string) => void },
                ) => { element: HTMLElement };
                fullTable: (c: string[], rows: Cell[][]) => HTMLElement;
              };
              const columns = ['id', 'name', 'city', 'amount', 'note', 'joined'];
              const cities = ['Leipzig', 'Lyon', 'Osaka', 'Porto', 'Brno', null];
              const rows: Cell[][] = [];
              for (let i = 0; i < n; i++) {
                rows.push([
                  i,
                  `person ${(i * 7919) % n}`,
                  cities[i % cities.length],
                  Math.round(((i * 31) % 1000) * 100) / 7,
                  i % 9 === 0 ? null : `note ${i}`,
                  `2024-${String(1 + (i % 12)).padStart(2, '0')}-01`,
                ]);
              }
              const app = document.getElementById('app')!;
              let copied = '';
              const layout = () => document.body.offsetHeight;
              let t = performance.now();
              const grid = w.resultGrid(columns, rows, {
                onCopy: (text) => {
                  copied = text;
                },
              });
              app.append(grid.element);
              layout();
              const build = performance.now() - t;
              const header = grid.element.querySelectorAll('th')[1] as HTMLElement;
              t = performance.now();
              header.click();
              layout();
              const sortAsc = performance.now() - t;
              t = performance.now();
              header.click();
              layout();
              const sortDesc = performance.now() - t;
              const next = grid.element.querySelector('[title^="Next page"]') as HTMLElement;
              t = performance.now();
              next.click();
              layout();
              const nextPage = performance.now() - t;
              const copy = Array.from(grid.element.querySelectorAll('vscode-button')).find(
                (b) => b.textContent === 'Copy',
              ) as HTMLElement;
              t = performance.now();
              copy.click();
              const copyAll = performance.now() - t;
              let fullTable: number | null = null;
              if (withFull) {
                app.replaceChildren();
                t = performance.now();
                app.append(w.fullTable(columns, rows));
                layout();
                fullTable = performance.now() - t;
              }
              return { build, sortAsc, sortDesc, nextPage, copyAll, fullTable, copyChars: copied.length };
            },
            { n, withFull: n <= 10_000 },
          ),
        );
        await page.close();
      }
      const med = (k: keyof Timings) => {
        const v = runs
          .map((x) => x[k])
          .filter((x): x is number => typeof x === 'number')
          .sort((a, b) => a - b);
        return v.length ? Math.round(percentile(v, 50) * 10) / 10 : null;
      };
      const row = {
        rows: n,
        columns: 6,
        buildMs: med('build'),
        sortAscMs: med('sortAsc'),
        sortDescMs: med('sortDesc'),
        nextPageMs: med('nextPage'),
        copyAllMs: med('copyAll'),
        copyChars: runs[0].copyChars,
        fullTableMs: med('fullTable'),
      };
      results.push(row);
      console.log(
        `${String(n).padStart(7)} rows: build ${row.buildMs} ms, sort ${row.sortAscMs} ms, ` +
          `reverse ${row.sortDescMs} ms, next page ${row.nextPageMs} ms, copy all ${row.copyAllMs} ms` +
          (row.fullTableMs !== null ? `; one full table ${row.fullTableMs} ms` : ''),
      );
    }
  } finally {
    await browser.close();
  }
  writeResult('resultGrid', {
    what:
      'result grid in headless Chromium: median of 5 runs, ms, measured inside the page (layout forced ' +
      'after each step); page size 100',
    chromium: chromiumPath,
    results,
  });
}

main().catch((err: unknown) => {
  console.error(`bench resultGrid: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
