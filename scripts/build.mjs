// Compiles the engine with esbuild: the CLI and its rule worker as ESM bundles in dist/, with
// npm packages left external (loaded lazily, only when needed). Fast enough to run before tests.
import * as esbuild from 'esbuild';
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
await esbuild.build({
  entryPoints: { cli: 'src/cli/main.ts', worker: 'src/runner/worker.ts', api: 'src/api/index.ts', data: 'src/data/index.ts', text: 'src/text/index.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  define: { RC1_BUILD_VERSION: JSON.stringify(pkg.version) },
});
