// Compiles the engine with esbuild: the CLI, its rule worker and the public API as ESM bundles in
// dist/, one file each (a single module loads faster than a web of chunks on every command). npm
// packages stay external and are loaded lazily, only when needed. The zod schema of declarations
// and the YAML parser are their own files, imported only when a declaration or a config file changed.
import * as esbuild from 'esbuild';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Paths below are relative to the package (packages/engine), wherever the build is started from.
// The real path: npm runs `prepare` through node_modules/rc1-build, and esbuild's
// packages: 'external' would take every file under a node_modules path for an npm package.
process.chdir(realpathSync(fileURLToPath(new URL('..', import.meta.url))));

/**
 * Modules the CLI imports lazily stay separate files: `import('./pipeline-schema.ts')` becomes a
 * runtime import of dist/pipeline-schema.js, so zod loads only when needed.
 */
const LAZY = { 'pipeline-schema': './src/config/pipeline-schema.ts', 'parse-yaml': './src/config/parse-yaml.ts' };
const lazyModules = {
  name: 'lazy-modules',
  setup(b) {
    for (const [name, file] of Object.entries(LAZY)) {
      const base = file.split('/').pop().replace(/[.]/g, '[.]');
      b.onResolve({ filter: new RegExp(`/${base}$`) }, (a) =>
        a.kind === 'dynamic-import' ? { path: `./${name}.js`, external: true } : undefined,
      );
    }
  },
};

await esbuild.build({
  entryPoints: {
    cli: './src/cli/main.ts',
    worker: './src/runner/worker.ts',
    ...LAZY,
    api: './src/api/index.ts',
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

// The no-op fast path (src/cli/fast-noop.ts), which bin/rc1-build.js (CommonJS) requires before
// it loads the CLI: one small CommonJS file, so a no-op that it answers never parses dist/cli.js.
await esbuild.build({
  entryPoints: { noop: './src/cli/fast-noop.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});

// The native thin client (client/rc1-client.c): a served command then starts no node process
// (docs/engine.md, "The resident server"). Optional: with no C compiler ($CC, else cc) the
// launcher bin/rc1-build runs the JavaScript client, bin/rc1-build.js, which does the same.
// Linux only: it reads /proc (its own path, the server's start time) and uses pipe2.
{
  const { spawnSync } = await import('node:child_process');
  const { rmSync } = await import('node:fs');
  const cc = process.env.CC || 'cc';
  const out = 'dist/rc1-client';
  const r =
    process.platform !== 'linux'
      ? { status: null, error: { code: `not Linux (${process.platform})` } }
      : spawnSync(cc, ['-O2', '-std=c11', '-Wall', '-Wextra', '-o', `${out}.tmp`, 'client/rc1-client.c'], {
          stdio: ['ignore', 'inherit', 'inherit'],
        });
  if (r.status === 0) {
    const { renameSync } = await import('node:fs');
    renameSync(`${out}.tmp`, out);
  } else {
    rmSync(`${out}.tmp`, { force: true });
    rmSync(out, { force: true }); // never a client older than the engine beside it
    console.warn(
      `rc1-build: the native client was not built (${r.error ? `${r.error.code === 'ENOENT' ? `${cc}: not found` : r.error.code}` : `${cc} exited ${r.status}`}); served commands start node instead (~60 ms more each)`,
    );
  }
}
