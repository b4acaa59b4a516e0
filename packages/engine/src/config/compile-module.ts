// Compiles TypeScript modules (rc1.build.ts and rules) for running, and computes their code
// closure: every local source file they import, with its sha256. The closure is what enters a
// target's fingerprint as "code". A closure is re-used while every file in it still has the same
// hash (checked through the stat cache, reading nothing); only then is esbuild loaded.
// 'rc1-build' (the public API) resolves to this package's packages/engine/src/api, so the API a rule calls is part
// of its closure; a pipeline's own library code (imported by relative path) is bundled like the
// rule itself. npm packages stay external, resolved to absolute paths so the compiled file runs
// from .rc1/compiled/, and each one's package.json joins the closure so an upgrade reruns the rules
// that use it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire, isBuiltin } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { StatCache } from '../hash/stat-cache.ts';
import { sha256Hex } from '../hash/hash-file.ts';
import { canonicalJson } from '../util/canonical-json.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';

/** esbuild, once a compile has loaded it: its long-lived service child was started then. */
let esbuildLoaded: typeof import('esbuild') | null = null;

/**
 * Stops esbuild's service child if a compile started one. The resident server calls it after every
 * command: the child is spawned with process.env as it is then, during a served command the
 * request's environment, which must not outlive the request (docs/engine.md, "The resident server").
 * The next compile starts a new one.
 */
export async function stopCompilerService(): Promise<void> {
  if (esbuildLoaded) await esbuildLoaded.stop();
}

/** Root of the rc1-build package (dist/cli.js or packages/engine/src/config/compile-module.ts → ..). */
export function engineRoot(): string {
  let d = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(d, 'package.json')) || !fs.existsSync(path.join(d, 'src', 'api'))) {
    const up = path.dirname(d);
    if (up === d) throw new Error('internal error: cannot find the rc1-build package root; please report');
    d = up;
  }
  return d;
}

interface ClosureRecord {
  files: Record<string, string>;
  out: string;
}

export class CompileError extends Error {
  constructor(
    readonly entry: string,
    message: string,
  ) {
    super(message);
  }
}

export class ModuleCompiler {
  private records: Record<string, ClosureRecord> = {};
  private dirty = false;
  private readonly dir: string;
  private readonly indexFile: string;
  /** How many modules were (re)compiled in this process. */
  compiles = 0;
  /** Entries whose closure was checked (or compiled) in this process: files do not change mid-command. */
  private checked = new Set<string>();

  constructor(
    private readonly root: string,
    stateDir: string,
    private readonly stat: StatCache,
    private readonly engine = engineRoot(),
  ) {
    this.dir = path.join(stateDir, 'compiled');
    this.indexFile = path.join(this.dir, 'closures.json');
    try {
      this.records = JSON.parse(fs.readFileSync(this.indexFile, 'utf8')) as Record<string, ClosureRecord>;
    } catch {
      this.records = {};
    }
  }

  private stillValid(rec: ClosureRecord | undefined, entry: string): rec is ClosureRecord {
    if (!rec) return false;
    if (this.checked.has(entry)) return true;
    for (const [p, sha] of Object.entries(rec.files)) if (this.stat.hash(p)?.sha256 !== sha) return false;
    if (!fs.existsSync(path.join(this.dir, rec.out))) return false;
    this.checked.add(entry);
    return true;
  }

  /** The code closure of a module: path → sha256 of every local file it imports (itself included). */
  async closure(entry: string): Promise<Record<string, string>> {
    return this.knownClosure(entry) ?? (await this.compile(entry)).files;
  }

  /**
   * The closure when it is known and still valid (no compile needed), else null: the synchronous
   * path for callers that ask once per target (1 000 awaits on a no-op otherwise).
   */
  knownClosure(entry: string): Record<string, string> | null {
    const rec = this.records[entry];
    return this.stillValid(rec, entry) ? rec.files : null;
  }

  /** Absolute path of the compiled ESM file for a module. */
  async compiled(entry: string): Promise<string> {
    const rec = this.records[entry];
    if (this.stillValid(rec, entry)) return path.join(this.dir, rec.out);
    return path.join(this.dir, (await this.compile(entry)).out);
  }

  private rel(abs: string): string {
    const r = path.relative(this.root, abs);
    return r.startsWith('..') || path.isAbsolute(r) ? abs : r.split(path.sep).join('/');
  }

  private async compile(entry: string): Promise<ClosureRecord> {
    // require, not import(): esbuild is CommonJS, and import() would first scan its ~100 KB
    // main.js for named exports (cjs-module-lexer): ~13 ms of every compile's start-up.
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    esbuildLoaded = esbuild;
    this.compiles++;
    const engine = this.engine;
    const pkgJsons = new Set<string>();
    const plugin: import('esbuild').Plugin = {
      name: 'rc1-resolve',
      setup(b) {
        b.onResolve({ filter: /^rc1-build(\/.*)?$/ }, (a) => {
          if (a.path !== 'rc1-build')
            return {
              errors: [
                {
                  text: `'${a.path}' is not a module of rc1-build: rules import the engine as 'rc1-build' and their own library code by relative path`,
                },
              ],
            };
          return { path: path.join(engine, 'src', 'api', 'index.ts') };
        });
        b.onResolve({ filter: /^[^./]/ }, async (a) => {
          if (a.pluginData === 'rc1-inner') return undefined;
          if (isBuiltin(a.path)) return { path: a.path, external: true };
          let r = await b.resolve(a.path, {
            kind: a.kind,
            resolveDir: a.resolveDir,
            importer: a.importer,
            pluginData: 'rc1-inner',
          });
          // rc1-build's own dependencies (zod, …) are available to rules even when not hoisted.
          if (r.errors.length > 0)
            r = await b.resolve(a.path, { kind: a.kind, resolveDir: engine, pluginData: 'rc1-inner' });
          if (r.errors.length > 0) return { errors: r.errors };
          let d = path.dirname(r.path);
          while (d !== path.dirname(d)) {
            const pj = path.join(d, 'package.json');
            if (fs.existsSync(pj) && /"name"\s*:/.test(fs.readFileSync(pj, 'utf8'))) {
              pkgJsons.add(pj);
              break;
            }
            d = path.dirname(d);
          }
          return { path: r.path, external: true };
        });
      },
    };
    let result: import('esbuild').BuildResult<{ metafile: true; write: false }>;
    try {
      result = await esbuild.build({
        entryPoints: [path.resolve(this.root, entry)],
        absWorkingDir: this.root,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        write: false,
        metafile: true,
        sourcemap: 'linked',
        logLevel: 'silent',
        plugins: [plugin],
        outfile: path.join(this.dir, 'out.mjs'),
      });
    } catch (e) {
      const errs = (e as { errors?: import('esbuild').Message[] }).errors ?? [];
      const msg = errs
        .map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ` : '') + m.text)
        .join('\n');
      throw new CompileError(entry, msg || String(e));
    }
    const files: Record<string, string> = {};
    for (const k of Object.keys(result.metafile.inputs).sort()) {
      const rel = this.rel(path.resolve(this.root, k));
      const h = this.stat.hash(rel);
      if (h) files[rel] = h.sha256;
    }
    for (const pj of [...pkgJsons].sort()) {
      const rel = this.rel(pj);
      const h = this.stat.hash(rel);
      if (h) files[rel] = h.sha256;
    }
    const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const k of Object.keys(files)) delete files[k];
    Object.assign(files, sorted);
    const js = result.outputFiles.find((f) => f.path.endsWith('.mjs'))!;
    const map = result.outputFiles.find((f) => f.path.endsWith('.map'));
    const base = entry.replace(/[^\w.-]+/g, '_');
    const out = `${base}-${sha256Hex(canonicalJson(files)).slice(0, 16)}.mjs`;
    if (!fs.existsSync(path.join(this.dir, out))) {
      // The source map sits beside the module (linked): read only for stack traces and diagnostics.
      // Engine writes: a full disk here halts the build (EngineWriteError), unlike a rule it cannot read.
      const mapFile = path.join(this.dir, `${out}.map`);
      if (map) engineWrite('a compiled rule', mapFile, () => writeFileAtomic(mapFile, map.contents));
      const code = Buffer.from(js.contents)
        .toString('utf8')
        .replace(/\/\/# sourceMappingURL=\S+\s*$/, `//# sourceMappingURL=${out}.map\n`);
      const outFile = path.join(this.dir, out);
      engineWrite('a compiled rule', outFile, () => writeFileAtomic(outFile, code));
    }
    const old = this.records[entry];
    if (old && old.out !== out) {
      fs.rmSync(path.join(this.dir, old.out), { force: true });
      fs.rmSync(path.join(this.dir, `${old.out}.map`), { force: true });
    }
    const rec = { files, out };
    this.records[entry] = rec;
    this.checked.add(entry);
    this.dirty = true;
    return rec;
  }

  save(): void {
    if (!this.dirty) return;
    writeFileAtomic(this.indexFile, JSON.stringify(this.records));
    this.dirty = false;
  }
}
