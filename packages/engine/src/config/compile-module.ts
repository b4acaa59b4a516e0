// Compiles TypeScript modules (rc1.build.ts and rules) for running, and computes their code
// closure: every local source file they import, with its sha256. The closure is what enters a
// target's fingerprint as "code". A closure is re-used while every file in it still has the same
// hash (checked through the stat cache, reading nothing); only then is esbuild loaded.
// 'rc1-build' (the public API) resolves to this package's packages/engine/src/api, so the API a rule
// calls is part of its closure; a pipeline's own library code is bundled like the rule itself:
// imported by relative path, or by a bare name that resolves to a file of the workspace outside
// node_modules (a tsconfig `paths` alias, a package.json `#imports` entry, an npm-workspace
// package; a CommonJS one excepted). npm packages stay external, resolved to absolute paths so the
// compiled file runs from .rc1/compiled/, and each one's package.json joins the closure so an
// upgrade reruns the rules that use it.
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

/** The real path of a file (symlinks resolved), or the path itself when it cannot be resolved. */
function realPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * Whether Node runs a JavaScript file as CommonJS: a .cjs file, or a .js one whose nearest
 * package.json does not say "type": "module". TypeScript and other files: false.
 */
function isCommonJs(file: string): boolean {
  const ext = path.extname(file);
  if (ext === '.cjs') return true;
  if (ext !== '.js') return false;
  for (let d = path.dirname(file); d !== path.dirname(d); d = path.dirname(d)) {
    let text: string;
    try {
      text = fs.readFileSync(path.join(d, 'package.json'), 'utf8');
    } catch {
      continue;
    }
    try {
      return (JSON.parse(text) as { type?: unknown }).type !== 'module';
    } catch {
      return true;
    }
  }
  return true;
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
  /**
   * The root's real path (symlinks resolved). esbuild works in it: the metafile's keys are relative
   * to it, and the importers it gives the resolve plugin are real paths.
   */
  private readonly realRoot: string;
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
    // Versioned: a record written before closures took in the npm packages of a symlinked root's
    // rules (compileMany) and the local files imported by a bare name stays valid while its files
    // are unchanged, so the closure it lacks a file in would stay incomplete; a new name drops them
    // all (each rule compiles once; its closure, when the same, leaves its targets up to date).
    this.indexFile = path.join(this.dir, 'closures-2.json');
    this.realRoot = realPath(root);
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

  /** A file's path relative to the root (reached through the root or its real path), else absolute. */
  private rel(abs: string): string {
    for (const base of this.realRoot === this.root ? [this.root] : [this.root, this.realRoot]) {
      const r = path.relative(base, abs);
      if (!r.startsWith('..') && !path.isAbsolute(r)) return r.split(path.sep).join('/');
    }
    return abs;
  }

  /**
   * The code closures of several modules, as closure() gives each: the ones not known and valid
   * are compiled in one esbuild build (it parses and resolves the files they share once, where
   * one build per module parses them again each time). Each module's closure is the one a build
   * of that module alone gives, read from the build's import graph (every local file reachable
   * from it, plus the package.json of each npm package those files import), and its compiled
   * file is the same bytes (esbuild bundles each entry point of a build without splitting on its
   * own). When the build fails, the modules its errors name are compiled alone, so an error is
   * reported against its module with the message compile() gives, and the others still compile.
   * A module that cannot be compiled gives its error in place of a closure.
   */
  async compileMany(entries: readonly string[]): Promise<Map<string, Record<string, string> | Error>> {
    const out = new Map<string, Record<string, string> | Error>();
    const pending: string[] = [];
    for (const entry of new Set(entries)) {
      const known = this.knownClosure(entry);
      if (known) out.set(entry, known);
      else pending.push(entry);
    }
    const alone = async (list: readonly string[]): Promise<void> => {
      const got = await Promise.all(
        list.map((entry) =>
          this.compile(entry).then(
            (rec) => rec.files,
            (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
          ),
        ),
      );
      for (const [i, entry] of list.entries()) out.set(entry, got[i]!);
    };
    if (pending.length <= 1) {
      await alone(pending);
      return out;
    }
    const esbuild = this.esbuild();
    const byImporter = new Map<string, Set<string>>();
    const names = pending.map((_, i) => `e${i}`);
    let result: import('esbuild').BuildResult<{ metafile: true; write: false }>;
    try {
      result = await esbuild.build({
        ...this.options(byImporter),
        entryPoints: pending.map((entry, i) => ({ in: path.resolve(this.root, entry), out: names[i]! })),
        outdir: this.dir,
        outExtension: { '.js': '.mjs' },
      });
    } catch (e) {
      // A module whose own file an error names is compiled alone, the others together again
      // (each alone when no error names a module's file: one in a shared file fails them all).
      const named = new Set<string>();
      for (const m of (e as { errors?: import('esbuild').Message[] }).errors ?? [])
        if (m.location) named.add(path.resolve(this.realRoot, m.location.file));
      const broken = pending.filter((entry) => named.has(path.resolve(this.realRoot, entry)));
      if (broken.length === 0 || broken.length === pending.length) await alone(pending);
      else {
        const [, rest] = await Promise.all([
          alone(broken),
          this.compileMany(pending.filter((entry) => !broken.includes(entry))),
        ]);
        for (const [entry, got] of rest) out.set(entry, got);
      }
      return out;
    }
    this.compiles += pending.length;
    const { inputs, outputs } = result.metafile;
    const outputOf = new Map<string, string>(); // absolute output path → its metafile key
    for (const k of Object.keys(outputs)) outputOf.set(path.resolve(this.realRoot, k), k);
    const unsure: string[] = [];
    // Each file's real path (a metafile key resolved, symlinks and all), the key of byImporter.
    const realOf = new Map<string, string>();
    for (const [i, entry] of pending.entries()) {
      const jsPath = path.join(this.dir, `${names[i]}.mjs`);
      const js = result.outputFiles.find((f) => f.path === jsPath)!;
      const map = result.outputFiles.find((f) => f.path === `${jsPath}.map`);
      const start = outputs[outputOf.get(jsPath)!]!.entryPoint!;
      // The files a build of this module alone reads: the ones its imports reach, tree-shaken or not.
      // An external import the resolve plugin did not make (a built-in's name or a package's
      // absolute path) is esbuild's own: a glob import (`import(\`./x/${n}.ts\`)`), whose files
      // the metafile lists with no edge to them. Such a module is compiled alone.
      const reached = new Set<string>([start]);
      const stack = [start];
      let sure = true;
      while (stack.length && sure) {
        for (const imp of inputs[stack.pop()!]!.imports) {
          if (imp.external) {
            if (!isBuiltin(imp.path) && !path.isAbsolute(imp.path)) sure = false;
            continue;
          }
          if (!inputs[imp.path] || reached.has(imp.path)) continue;
          reached.add(imp.path);
          stack.push(imp.path);
        }
      }
      if (!sure) {
        unsure.push(entry);
        continue;
      }
      const pkgJsons = new Set<string>();
      for (const f of reached) {
        let real = realOf.get(f);
        if (real === undefined) realOf.set(f, (real = realPath(path.resolve(this.realRoot, f))));
        for (const pj of byImporter.get(real) ?? []) pkgJsons.add(pj);
      }
      try {
        out.set(entry, this.record(entry, [...reached], pkgJsons, js, map).files);
      } catch (e) {
        out.set(entry, e instanceof Error ? e : new Error(String(e)));
      }
    }
    this.compiles -= unsure.length;
    await alone(unsure);
    return out;
  }

  /** esbuild, loaded on first use (its service child starts with the first build). */
  private esbuild(): typeof import('esbuild') {
    // require, not import(): esbuild is CommonJS, and import() would first scan its ~100 KB
    // main.js for named exports (cjs-module-lexer): ~13 ms of every compile's start-up.
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    esbuildLoaded = esbuild;
    return esbuild;
  }

  /**
   * The build options every compile shares. The resolve plugin adds, for each file that imports an
   * npm package, that package's package.json to `pkgJsons` under the importing file's real path.
   */
  private options(pkgJsons: Map<string, Set<string>>) {
    const engine = this.engine;
    const realRoot = this.realRoot;
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
              // Under the importer's real path, as the walk over the metafile (compileMany) looks
              // files up: the root may be reached through a symlink.
              const importer = realPath(a.importer);
              (pkgJsons.get(importer) ?? pkgJsons.set(importer, new Set()).get(importer)!).add(pj);
              break;
            }
            d = path.dirname(d);
          }
          // A bare specifier that names a file of the workspace (a tsconfig `paths` alias, a
          // package.json `#imports` entry, an npm-workspace package linked into node_modules) is
          // local code: bundled like a relative import, so the file is in the closure (its
          // package.json above too, as the map the name goes through). A CommonJS file stays
          // external: bundled into the ESM output, its require() of an npm package would throw.
          const local = path.relative(realRoot, realPath(r.path));
          if (
            !local.startsWith('..') &&
            !path.isAbsolute(local) &&
            !local.split(path.sep).includes('node_modules') &&
            !isCommonJs(r.path)
          )
            return { path: r.path, sideEffects: r.sideEffects };
          return { path: r.path, external: true };
        });
      },
    };
    return {
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
    } satisfies import('esbuild').BuildOptions;
  }

  private async compile(entry: string): Promise<ClosureRecord> {
    const esbuild = this.esbuild();
    this.compiles++;
    const pkgJsons = new Map<string, Set<string>>();
    let result: import('esbuild').BuildResult<{ metafile: true; write: false }>;
    try {
      result = await esbuild.build({
        ...this.options(pkgJsons),
        entryPoints: [path.resolve(this.root, entry)],
        outfile: path.join(this.dir, 'out.mjs'),
      });
    } catch (e) {
      const errs = (e as { errors?: import('esbuild').Message[] }).errors ?? [];
      const msg = errs
        .map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ` : '') + m.text)
        .join('\n');
      throw new CompileError(entry, msg || String(e));
    }
    const js = result.outputFiles.find((f) => f.path.endsWith('.mjs'))!;
    const map = result.outputFiles.find((f) => f.path.endsWith('.map'));
    const all = new Set<string>();
    for (const s of pkgJsons.values()) for (const pj of s) all.add(pj);
    return this.record(entry, Object.keys(result.metafile.inputs), all, js, map);
  }

  /**
   * Records a compiled module: its closure (each input file, a metafile key, and each package.json,
   * absolute, with its sha256; a file inside the workspace under its path relative to the root), and
   * its compiled file and source map, named by the closure's hash.
   */
  private record(
    entry: string,
    inputs: readonly string[],
    pkgJsons: ReadonlySet<string>,
    js: import('esbuild').OutputFile,
    map: import('esbuild').OutputFile | undefined,
  ): ClosureRecord {
    const files: Record<string, string> = {};
    for (const k of [...inputs].sort()) {
      const rel = this.rel(path.resolve(this.realRoot, k));
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
    fs.rmSync(path.join(this.dir, 'closures.json'), { force: true }); // the index's earlier name
    this.dirty = false;
  }
}
