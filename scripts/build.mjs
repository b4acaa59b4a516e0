// Compiles the engine with esbuild: the CLI, its rule worker and the public modules as ESM
// bundles in dist/, one file each (a single module loads faster than a web of chunks on every
// command). npm packages stay external and are loaded lazily, only when needed. The zod schema
// of declarations and the YAML parser are their own files, imported only when a declaration or a
// config file changed.
import * as esbuild from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';

/** Every library module with an index.ts (src/data, src/text, …) is published as rc1-build/<dir>. */
const libraries = Object.fromEntries(
  readdirSync('src', { withFileTypes: true })
    .filter((e) => e.isDirectory() && !['api', 'cli', 'config', 'runner'].includes(e.name) && existsSync(`src/${e.name}/index.ts`))
    .map((e) => [e.name, `src/${e.name}/index.ts`]),
);

/**
 * Modules the CLI imports lazily stay separate files: `import('./pipeline-schema.ts')` becomes a
 * runtime import of dist/pipeline-schema.js, so zod (or SQLite) loads only when needed.
 */
const LAZY = { 'pipeline-schema': 'src/config/pipeline-schema.ts', 'parse-yaml': 'src/config/parse-yaml.ts', 'scorecache-cli': 'src/scoring/cache-cli.ts' };
const lazyModules = {
  name: 'lazy-modules',
  setup(b) {
    for (const [name, file] of Object.entries(LAZY)) {
      const base = file.split('/').pop().replace(/[.]/g, '[.]');
      b.onResolve({ filter: new RegExp(`/${base}$`) }, (a) => (a.kind === 'dynamic-import' ? { path: `./${name}.js`, external: true } : undefined));
    }
  },
};

await esbuild.build({
  entryPoints: {
    cli: 'src/cli/main.ts',
    worker: 'src/runner/worker.ts',
    ...LAZY,
    api: 'src/api/index.ts',
    ...libraries,
  },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  plugins: [lazyModules],
  logLevel: 'warning',
});
