// Compiles TypeScript modules (rc1.build.ts and rules) for running, and computes their code
// closure: every local source file they import, with its sha256. The closure is what enters a
// target's fingerprint as "code". A closure is re-used while every file in it still has the same
// hash (checked through the stat cache, reading nothing); only then is esbuild loaded.
// 'rc1-build' (the public API) resolves to this package's packages/engine/src/api, so the API a rule
// calls is part of its closure; a pipeline's own library code is bundled like the rule itself:
// imported by relative path, or by a bare name that resolves to a TypeScript file of the workspace
// outside node_modules (a tsconfig `paths` alias, a package.json `#imports` entry, an npm-workspace
// package). A JavaScript file of the workspace reached by a bare name stays external (imported by
// its absolute path, so its import.meta.url, __dirname and the files beside it are where they
// were), and its closure (the files a separate analysis build of it reaches) joins the rule's.
// The tsconfig.json and package.json files that map a bare name to a workspace file join the
// closure of the file that imports it, so re-pointing the alias reruns the rule. npm packages stay
// external, resolved to absolute paths so the compiled file runs from .rc1/compiled/, and each
// one's package.json joins the closure so an upgrade reruns the rules that use it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire, isBuiltin } from 'node:module';
import type { StatCache } from '../hash/stat-cache.ts';
import { sha256Hex } from '../hash/hash-file.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { engineWrite } from '../util/write-error.ts';
import { engineRoot } from '../util/engine-root.ts';

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

export { engineRoot };

/** The real path of a file (symlinks resolved), or the path itself when it cannot be resolved. */
function realPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** Files Node cannot run from where they are (TypeScript, JSX): bundled when local. */
const NEEDS_COMPILING = /\.(ts|mts|cts|tsx|jsx)$/;

/** Whether `dir` is `root` or inside it. */
function within(root: string, dir: string): boolean {
  const r = path.relative(root, dir);
  return !r.startsWith('..') && !path.isAbsolute(r);
}

/** The `extends` of a tsconfig file's text (JSON with comments and trailing commas), as a list. */
function tsconfigExtends(text: string): string[] {
  // Strings kept, comments dropped, then trailing commas: enough to read one field.
  const json = text
    .replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_m, str: string | undefined) => str ?? '')
    .replace(/,(\s*[}\]])/g, '$1');
  try {
    const ext = (JSON.parse(json) as { extends?: unknown }).extends;
    if (typeof ext === 'string') return [ext];
    if (Array.isArray(ext)) return ext.filter((e): e is string => typeof e === 'string');
  } catch {
    // Unreadable: esbuild reports it when it matters; the file itself is in the closure.
  }
  return [];
}

/**
 * The files that map a bare name imported from `dir` (a real path) to a file of the workspace: the
 * nearest tsconfig.json or jsconfig.json from `dir` up to the workspace root (esbuild's `paths`,
 * `baseUrl`), the local files of its `extends` chain, and the nearest package.json (its `#imports`),
 * named or not. Each one found, absolute.
 */
function bareNameMaps(dir: string, realRoot: string): string[] {
  if (!within(realRoot, dir)) return [];
  const found: string[] = [];
  let tsconfig: string | undefined;
  let pkg: string | undefined;
  for (let d = dir; ; d = path.dirname(d)) {
    if (!tsconfig)
      for (const n of ['tsconfig.json', 'jsconfig.json'])
        if (fs.existsSync(path.join(d, n))) {
          tsconfig = path.join(d, n);
          break;
        }
    if (!pkg && fs.existsSync(path.join(d, 'package.json'))) pkg = path.join(d, 'package.json');
    if ((tsconfig && pkg) || d === realRoot || d === path.dirname(d)) break;
  }
  if (pkg) found.push(pkg);
  const seen = new Set<string>();
  const stack = tsconfig ? [tsconfig] : [];
  while (stack.length) {
    const f = stack.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    found.push(f);
    let text: string;
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const e of tsconfigExtends(text)) {
      // A package name (an npm package's tsconfig) is not local: only a path is followed.
      if (!e.startsWith('.') && !path.isAbsolute(e)) continue;
      const base = path.resolve(path.dirname(f), e);
      const next = [base, `${base}.json`, path.join(base, 'tsconfig.json')].find((c) => {
        try {
          return fs.statSync(c).isFile();
        } catch {
          return false;
        }
      });
      if (next && within(realRoot, path.dirname(next))) stack.push(next);
    }
  }
  return found;
}

/** What a JavaScript file of the workspace, external to the rule, reaches: its closure's parts. */
interface JsClosure {
  /** Absolute paths of the files its analysis build read (itself first). */
  files: string[];
  /** package.json and tsconfig files its imports went through (npm packages, bare-name maps). */
  pkgJsons: Set<string>;
}

interface ClosureRecord {
  files: Record<string, string>;
  out: string;
  /**
   * The shared chunks `out` imports, directly or not (statically or by import()), file names in
   * the compiled folder: modules compiled in one build share the code they have in common
   * (compileMany). Absent: a module compiled alone, self-contained.
   */
  chunks?: string[];
}

export class CompileError extends Error {
  constructor(
    readonly entry: string,
    message: string,
  ) {
    super(message);
  }
}

/** A shared chunk's file name (compileMany: `chunkNames: 'chunk-[hash]'`, named by its content). */
const CHUNK_NAME = /^chunk-[A-Z0-9]+\.mjs$/;
/** A shared chunk's import in a compiled module, as esbuild writes it: `from "./chunk-<hash>.mjs"`, `import "./…"`, `import("./…")`. */
const CHUNK_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.\/chunk-[A-Z0-9]+\.mjs)["']/g;

/**
 * A compiled module and the shared chunks it imports, directly or not (compileMany): the files a
 * machine that runs it must have beside it (a Slurm job staged through the remote cache). Chunks
 * are found by their import specifiers in the module's text, which esbuild writes as
 * "./chunk-<hash>.mjs". A chunk missing from the folder is an error naming it.
 */
export function compiledModuleFiles(module: string): string[] {
  const dir = path.dirname(module);
  const seen = new Set<string>([module]);
  const stack = [module];
  while (stack.length) {
    const from = stack.pop()!;
    const text = fs.readFileSync(from, 'utf8');
    for (const m of text.matchAll(CHUNK_IMPORT)) {
      const file = path.join(dir, m[1]!);
      if (seen.has(file)) continue;
      if (!fs.existsSync(file))
        throw new Error(
          `${from} imports ${m[1]}, which is not in ${dir}: build again, and the module is compiled again`,
        );
      seen.add(file);
      stack.push(file);
    }
  }
  return [...seen];
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
  /** Shared chunks found on disk in this process: ~20 modules import the same ~50 (one stat each, not ~230). */
  private chunksSeen = new Set<string>();
  /** Entries whose compiled file and chunks were found on disk (or written) since the last revalidate(). */
  private present = new Set<string>();

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
    // closures-3: a record before JavaScript workspace files were analysed and tsconfig/package.json
    // maps of bare names recorded lacks those files.
    this.indexFile = path.join(this.dir, 'closures-3.json');
    this.realRoot = realPath(root);
    try {
      this.records = JSON.parse(fs.readFileSync(this.indexFile, 'utf8')) as Record<string, ClosureRecord>;
    } catch {
      this.records = {};
    }
  }

  private stillValid(rec: ClosureRecord | undefined, entry: string): rec is ClosureRecord {
    if (!rec) return false;
    if (!this.checked.has(entry))
      for (const [p, sha] of Object.entries(rec.files)) if (this.stat.hash(p)?.sha256 !== sha) return false;
    if (!this.present.has(entry)) {
      if (!fs.existsSync(path.join(this.dir, rec.out))) return false;
      for (const c of rec.chunks ?? []) {
        if (this.chunksSeen.has(c)) continue;
        if (!fs.existsSync(path.join(this.dir, c))) return false;
        this.chunksSeen.add(c);
      }
      this.present.add(entry);
    }
    this.checked.add(entry);
    return true;
  }

  /**
   * Forget which compiled files were found on disk (not the closures checked): called once the
   * workspace lock is held. A build that waited for the lock compiled before it; the build that
   * held it may have swept files this process found (or wrote) then and no saved index named
   * (sweep()), so they are looked for again, and compiled again where gone.
   */
  revalidate(): void {
    this.present.clear();
    this.chunksSeen.clear();
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
   * from it, plus the package.json of each npm package those files import). The build splits
   * code: what several modules import is emitted once, in shared chunks (chunk-<hash>.mjs, named
   * by their content) that each module imports, so RC1's 22 rules make 1.2 MB of code and maps
   * rather than 3.6 MB, and a thread that imports several of them (the params below, a rule
   * worker) parses and runs a library once. A module that imports another module of the build by
   * import() is compiled alone (esbuild would name the other by its place in this build). When the
   * build fails, the modules its errors name are compiled alone, so an error is reported against
   * its module with the message compile() gives, and the others still compile.
   * A module that cannot be compiled gives its error in place of a closure.
   */
  async compileMany(entries: readonly string[]): Promise<Map<string, Record<string, string> | Error>> {
    if (this.prefetching) await this.prefetching;
    return this.compileManyNow(entries);
  }

  /** A compile started ahead by prefetch() (its errors are compileMany's to report, later). */
  private prefetching: Promise<unknown> | null = null;

  /**
   * Starts compileMany(entries) now and returns at once, for a caller that knows the modules it
   * will ask for before it can ask: the pipeline's rules, compiled by esbuild while this thread
   * checks the declaration (~20 ms off a start from a fresh state directory). A later compileMany
   * waits for it first, then finds what it compiled known (knownClosure) instead of compiling again.
   */
  prefetch(entries: readonly string[]): void {
    const previous = this.prefetching;
    this.prefetching = (async () => {
      await previous;
      await this.compileManyNow(entries);
    })().catch(() => {});
  }

  private async compileManyNow(entries: readonly string[]): Promise<Map<string, Record<string, string> | Error>> {
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
    const jsByImporter = new Map<string, Set<string>>();
    const names = pending.map((_, i) => `e${i}`);
    let result: import('esbuild').BuildResult<{ metafile: true; write: false }>;
    try {
      result = await esbuild.build({
        ...this.options(byImporter, jsByImporter),
        entryPoints: pending.map((entry, i) => ({ in: path.resolve(this.root, entry), out: names[i]! })),
        outdir: this.dir,
        outExtension: { '.js': '.mjs' },
        splitting: true,
        chunkNames: 'chunk-[hash]',
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
          this.compileManyNow(pending.filter((entry) => !broken.includes(entry))),
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
    const analyses = new Map<string, Promise<JsClosure>>();
    const done: Promise<void>[] = [];
    for (const [i, entry] of pending.entries()) {
      const jsPath = path.join(this.dir, `${names[i]}.mjs`);
      const js = result.outputFiles.find((f) => f.path === jsPath)!;
      const map = result.outputFiles.find((f) => f.path === `${jsPath}.map`);
      const start = outputs[outputOf.get(jsPath)!]!.entryPoint!;
      // null: the module imports another module of this build (esbuild names it by its place in
      // the build, e<i>.mjs, not by its content): such a module is compiled alone.
      const chunks = this.chunksOf(outputOf.get(jsPath)!, outputs, result.outputFiles);
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
      if (!sure || !chunks) {
        unsure.push(entry);
        continue;
      }
      const pkgJsons = new Set<string>();
      const jsFiles = new Set<string>();
      for (const f of reached) {
        let real = realOf.get(f);
        if (real === undefined) realOf.set(f, (real = realPath(path.resolve(this.realRoot, f))));
        for (const pj of byImporter.get(real) ?? []) pkgJsons.add(pj);
        for (const jf of jsByImporter.get(real) ?? []) jsFiles.add(jf);
      }
      done.push(
        this.withJsClosures([...reached], pkgJsons, jsFiles, analyses).then(
          (inputs) => {
            out.set(entry, this.record(entry, inputs, pkgJsons, js, map, chunks).files);
          },
          (e: unknown) => {
            out.set(entry, e instanceof Error ? e : new Error(String(e)));
          },
        ),
      );
    }
    await Promise.all(done);
    this.compiles -= unsure.length;
    await alone(unsure);
    return out;
  }

  /**
   * The shared chunks an output of a split build imports, directly or not, statically or by
   * import(): each with its source map, in a stable order. null when one of the files it reaches
   * is not a shared chunk (another module of the build, imported by import()).
   */
  private chunksOf(
    key: string,
    outputs: import('esbuild').Metafile['outputs'],
    files: readonly import('esbuild').OutputFile[],
  ): { name: string; js: import('esbuild').OutputFile; map: import('esbuild').OutputFile | undefined }[] | null {
    const seen = new Set<string>();
    const stack = [key];
    while (stack.length) {
      for (const imp of outputs[stack.pop()!]?.imports ?? []) {
        if (imp.external || !outputs[imp.path] || seen.has(imp.path)) continue;
        if (!CHUNK_NAME.test(path.basename(imp.path))) return null;
        seen.add(imp.path);
        stack.push(imp.path);
      }
    }
    return [...seen].sort().map((k) => {
      const abs = path.resolve(this.realRoot, k);
      const js = files.find((f) => f.path === abs);
      if (!js) throw new Error(`esbuild: no output file for the chunk ${k}`);
      return { name: path.basename(abs), js, map: files.find((f) => f.path === `${abs}.map`) };
    });
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
   * A module's closure inputs (metafile keys or absolute paths) with the closures of the JavaScript
   * workspace files it imports by a bare name (`jsFiles`) added; their package.json and tsconfig
   * files go into `pkgJsons`. Each JavaScript file is analysed once per `cache`.
   */
  private async withJsClosures(
    inputs: readonly string[],
    pkgJsons: Set<string>,
    jsFiles: ReadonlySet<string>,
    cache: Map<string, Promise<JsClosure>>,
  ): Promise<string[]> {
    const all = [...inputs];
    for (const file of [...jsFiles].sort()) {
      let got = cache.get(file);
      if (!got) cache.set(file, (got = this.jsClosure(file)));
      const c = await got;
      all.push(...c.files);
      for (const pj of c.pkgJsons) pkgJsons.add(pj);
    }
    return all;
  }

  /**
   * The closure of a JavaScript file of the workspace that a rule imports by a bare name and Node
   * runs where it is: the files an esbuild build of it alone reads, every local file bundled
   * (whatever its language), npm packages external with their package.json. The build's output is
   * discarded. When it fails (an import esbuild cannot resolve that Node might, at run time only),
   * the closure is the file alone; its package.json is the rule's already.
   */
  private async jsClosure(file: string): Promise<JsClosure> {
    const pkgJsons = new Map<string, Set<string>>();
    try {
      const result = await this.esbuild().build({
        ...this.options(pkgJsons, null),
        entryPoints: [file],
        outfile: path.join(this.dir, 'analysis.mjs'),
        sourcemap: false,
      });
      const files = [file];
      for (const k of Object.keys(result.metafile.inputs)) {
        const abs = path.resolve(this.realRoot, k);
        if (abs !== file) files.push(abs);
      }
      const all = new Set<string>();
      for (const s of pkgJsons.values()) for (const pj of s) all.add(pj);
      return { files, pkgJsons: all };
    } catch {
      return { files: [file], pkgJsons: new Set() };
    }
  }

  /**
   * The build options every compile shares. The resolve plugin adds, for each file that imports an
   * npm package, that package's package.json to `pkgJsons` under the importing file's real path,
   * and for each bare name that resolves to a workspace file, the tsconfig and package.json files
   * that map it (bareNameMaps). A JavaScript file of the workspace reached by a bare name is
   * external, added to `jsFiles` under the importer's real path; with `jsFiles` null (the analysis
   * of such a file) every workspace file is bundled.
   */
  private options(pkgJsons: Map<string, Set<string>>, jsFiles: Map<string, Set<string>> | null) {
    const engine = this.engine;
    const realRoot = this.realRoot;
    const add = (m: Map<string, Set<string>>, importer: string, file: string): void => {
      (m.get(importer) ?? m.set(importer, new Set()).get(importer)!).add(file);
    };
    // One esbuild resolve per (kind, folder, name) in a build: the files of a folder import the same
    // packages, and each resolve is a round trip to esbuild's process that waits for this thread
    // (a clean state dir's compile of RC1's 22 rules: 43 such imports, 19 distinct; ~100 ms less,
    // bench/results/speed.md, twenty-first pass). The answer depends on nothing else: esbuild
    // looks up node_modules and the tsconfig from the folder.
    const resolved = new Map<string, Promise<import('esbuild').ResolveResult>>();
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
        // Bare names but `node:…` (esbuild keeps a built-in external itself, with no call here);
        // the names `n`, `no`, `nod` and `node` are bare names too.
        b.onResolve({ filter: /^(?:[^./n]|n$|n[^o]|no$|no[^d]|nod$|nod[^e]|node$|node[^:])/ }, async (a) => {
          if (a.pluginData === 'rc1-inner') return undefined;
          if (isBuiltin(a.path)) return { path: a.path, external: true };
          const key = `${a.kind}\0${a.resolveDir}\0${a.path}`;
          let pending = resolved.get(key);
          if (!pending) {
            pending = (async () => {
              const r = await b.resolve(a.path, {
                kind: a.kind,
                resolveDir: a.resolveDir,
                importer: a.importer,
                pluginData: 'rc1-inner',
              });
              // rc1-build's own dependencies (zod, …) are available to rules even when not hoisted.
              if (r.errors.length === 0) return r;
              return b.resolve(a.path, { kind: a.kind, resolveDir: engine, pluginData: 'rc1-inner' });
            })();
            resolved.set(key, pending);
          }
          const r = await pending;
          if (r.errors.length > 0) return { errors: r.errors };
          let d = path.dirname(r.path);
          while (d !== path.dirname(d)) {
            const pj = path.join(d, 'package.json');
            if (fs.existsSync(pj) && /"name"\s*:/.test(fs.readFileSync(pj, 'utf8'))) {
              // Under the importer's real path, as the walk over the metafile (compileMany) looks
              // files up: the root may be reached through a symlink.
              add(pkgJsons, realPath(a.importer), pj);
              break;
            }
            d = path.dirname(d);
          }
          // A bare specifier that names a file of the workspace (a tsconfig `paths` alias, a
          // package.json `#imports` entry, an npm-workspace package linked into node_modules) is
          // local code. The files that map the name to it join the importer's closure, so
          // re-pointing the name reruns the rule. A TypeScript file is bundled like a relative
          // import (Node cannot run it where it is); a JavaScript one stays external, so its
          // import.meta.url, __dirname and require() work from its own folder, and its own
          // closure is analysed apart (jsClosure).
          const real = realPath(r.path);
          const local = path.relative(realRoot, real);
          if (!local.startsWith('..') && !path.isAbsolute(local) && !local.split(path.sep).includes('node_modules')) {
            const importer = realPath(a.importer);
            for (const f of bareNameMaps(realPath(a.resolveDir), realRoot)) add(pkgJsons, importer, f);
            if (jsFiles === null || NEEDS_COMPILING.test(r.path)) return { path: r.path, sideEffects: r.sideEffects };
            add(jsFiles, importer, real);
          }
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
      // Maps serve stack traces and diagnostics' sites (mappings and file names): the sources' text
      // is not copied into them (a third of a compile's time and bytes).
      sourcemap: 'linked',
      sourcesContent: false,
      logLevel: 'silent',
      plugins: [plugin],
    } satisfies import('esbuild').BuildOptions;
  }

  private async compile(entry: string): Promise<ClosureRecord> {
    const esbuild = this.esbuild();
    this.compiles++;
    const pkgJsons = new Map<string, Set<string>>();
    const jsByImporter = new Map<string, Set<string>>();
    let result: import('esbuild').BuildResult<{ metafile: true; write: false }>;
    try {
      result = await esbuild.build({
        ...this.options(pkgJsons, jsByImporter),
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
    const jsFiles = new Set<string>();
    for (const s of jsByImporter.values()) for (const f of s) jsFiles.add(f);
    const inputs = await this.withJsClosures(Object.keys(result.metafile.inputs), all, jsFiles, new Map());
    return this.record(entry, inputs, all, js, map);
  }

  /**
   * Records a compiled module: its closure (each input file, a metafile key, and each package.json,
   * absolute, with its sha256; a file inside the workspace under its path relative to the root), and
   * its compiled file and source map, named by their content, with the shared chunks it imports
   * (a split build's; none for a module compiled alone).
   */
  private record(
    entry: string,
    inputs: readonly string[],
    pkgJsons: ReadonlySet<string>,
    js: import('esbuild').OutputFile,
    map: import('esbuild').OutputFile | undefined,
    chunks: readonly {
      name: string;
      js: import('esbuild').OutputFile;
      map: import('esbuild').OutputFile | undefined;
    }[] = [],
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
    // Named by the entry, its code (the source map's name left out) and its source map: a name is
    // always the same bytes, so a file is never rewritten in place; the chunks a module's file
    // imports are the chunks its record names, whichever build, alone or with other modules,
    // wrote either; and an edit that moves lines without changing the code (a comment) gets a new
    // map, under a new name.
    const text = Buffer.from(js.contents)
      .toString('utf8')
      .replace(/\/\/# sourceMappingURL=\S+\s*$/, '');
    const mapText = map ? Buffer.from(map.contents).toString('utf8') : '';
    const out = `${base}-${sha256Hex(`${entry}\0${text}\0${mapText}`).slice(0, 16)}.mjs`;
    // The source map sits beside the module (linked): read only for stack traces and diagnostics.
    // Engine writes: a full disk here halts the build (EngineWriteError), unlike a rule it cannot read.
    // Chunks and modules are named by their content: one already there is the same bytes. A
    // module is written after its chunks, its map before it.
    for (const c of chunks) {
      const file = path.join(this.dir, c.name);
      if (reuse(file)) continue;
      if (c.map) engineWrite('a compiled rule', `${file}.map`, () => writeFileAtomic(`${file}.map`, c.map!.contents));
      engineWrite('a compiled rule', file, () => writeFileAtomic(file, c.js.contents));
    }
    const outFile = path.join(this.dir, out);
    if (!reuse(outFile)) {
      const mapFile = path.join(this.dir, `${out}.map`);
      if (map) engineWrite('a compiled rule', mapFile, () => writeFileAtomic(mapFile, map.contents));
      engineWrite('a compiled rule', outFile, () =>
        writeFileAtomic(outFile, `${text}//# sourceMappingURL=${out}.map\n`),
      );
    }
    // The record's earlier module and chunks stay where they are: another process (a build
    // started before this edit) may be about to import them. sweep(), under the workspace lock,
    // removes them once no record names them and they are old enough.
    const rec: ClosureRecord = chunks.length ? { files, out, chunks: chunks.map((c) => c.name) } : { files, out };
    this.records[entry] = rec;
    for (const c of chunks) this.chunksSeen.add(c.name);
    this.checked.add(entry);
    this.present.add(entry);
    this.dirty = true;
    return rec;
  }

  save(): void {
    if (!this.dirty) return;
    writeFileAtomic(this.indexFile, JSON.stringify(this.records));
    // The index's earlier names.
    for (const old of ['closures.json', 'closures-2.json']) fs.rmSync(path.join(this.dir, old), { force: true });
    this.dirty = false;
  }

  /**
   * Removes the compiled files no record names: modules, chunks, their maps and temp files (any
   * file's in the folder) left by a command that does not save the index (a dry run, a refused build), by a process whose index
   * another process overwrote, or by a crash; and the records (with their files) of modules whose
   * entry file is gone (a rule file deleted; a rule taken out of the pipeline whose file stays
   * keeps its record and module until the file goes). The names kept are those of this
   * process's records and of the index on disk. A file modified less than `graceMs` ago is kept: a
   * command that does not take the workspace lock may have just written it and be about to import
   * it. Call with the workspace lock held; saves the index when a record was dropped.
   */
  sweep(graceMs = SWEEP_GRACE_MS, now = Date.now()): { files: number; bytes: number; records: number } {
    let records = 0;
    for (const entry of Object.keys(this.records)) {
      if (fs.existsSync(path.resolve(this.root, entry))) continue;
      delete this.records[entry];
      this.checked.delete(entry);
      this.present.delete(entry);
      records++;
      this.dirty = true;
    }
    this.save();
    let onDisk: Record<string, ClosureRecord> = {};
    try {
      onDisk = JSON.parse(fs.readFileSync(this.indexFile, 'utf8')) as Record<string, ClosureRecord>;
    } catch {
      /* none yet */
    }
    const named = new Set<string>();
    for (const rec of [...Object.values(this.records), ...Object.values(onDisk)])
      for (const f of [rec.out, ...(rec.chunks ?? [])]) named.add(f).add(`${f}.map`);
    let files = 0;
    let bytes = 0;
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      /* nothing compiled yet */
    }
    for (const name of names) {
      // Compiled modules, chunks and maps, and any file's temp name (writeFileAtomic's, left by a
      // crash: the index's and the config caches' too); never closures-3.json, config.json, ….
      const sweepable = /\.mjs(\.map)?$/.test(name) || /\.tmp-[\w-]+$/.test(name);
      if (!sweepable || named.has(name)) continue;
      const file = path.join(this.dir, name);
      let st: fs.Stats;
      try {
        st = fs.statSync(file);
      } catch {
        continue; // removed meanwhile
      }
      if (!st.isFile() || now - st.mtimeMs < graceMs) continue;
      try {
        fs.rmSync(file, { force: true });
      } catch {
        continue; // not ours to remove (EPERM in a shared folder, a read-only disk): left as it is
      }
      this.chunksSeen.delete(name);
      files++;
      bytes += st.size;
    }
    return { files, bytes, records };
  }
}

/**
 * Whether a compiled file is already there (the same bytes: files are named by content); one found
 * is touched, so that a sweep by another process (which spares young files) leaves it to the
 * module about to import it.
 */
function reuse(file: string): boolean {
  const now = new Date();
  try {
    fs.utimesSync(file, now, now);
  } catch {
    return fs.existsSync(file); // a file this user may not touch (EPERM) is still the same bytes
  }
  try {
    fs.utimesSync(`${file}.map`, now, now); // its map goes with it (written before it)
  } catch {
    /* none, or not ours: stack traces fall back to the compiled lines */
  }
  return true;
}

/** sweep() keeps unnamed compiled files younger than this: a command without the lock may be about to import them. */
export const SWEEP_GRACE_MS = 10 * 60_000;
