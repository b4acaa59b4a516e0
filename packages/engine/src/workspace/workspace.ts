// Opens a workspace: the state directory, caches and the resolved pipeline, wired together
// once per command. The only place where config/, hash/, state/ and cache/ meet.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { OutputCache } from '../cache/output-cache.ts';
import type { RemoteCache } from '../cache/remote/remote-cache.ts';
import { ModuleCompiler } from '../config/compile-module.ts';
import { compiledSeedDir, seedCompiled, updateSeed } from '../config/compiled-seed.ts';
import { unreadKeyDiagnostics, recordingConfig } from '../config/config-reads.ts';
import { type LoadedConfig, loadConfigs, locateKey } from '../config/load-configs.ts';
import {
  PIPELINE_FILE,
  configFiles,
  evaluatePipeline,
  importPipeline,
  loadPipeline,
  normalizeRel,
} from '../config/load-pipeline.ts';
import { pipelineCacheKey, readCachedPipeline, writeCachedPipeline } from '../config/pipeline-cache.ts';
import { cachedProfiles, chooseProfile } from '../config/profiles.ts';
import { withRuleParams } from '../config/rule-params.ts';
import { type Diagnostic, UsageError, didYouMean, siteString } from '../config/usage-error.ts';
import { pathsOnDiskProblems } from '../graph/workspace-paths.ts';
import { expandChecked } from '../rebuild/decide.ts';
import type { ResolvedPipeline } from '../graph/resolved.ts';
import { GlobCache } from '../hash/glob-cache.ts';
import { StatCache } from '../hash/stat-cache.ts';
import type { DecideEnv } from '../rebuild/decide.ts';
import { OutputCommitter } from '../state/commit-outputs.ts';
import { TraceLog } from '../state/trace-log.ts';
import { WorkspaceLock } from '../state/workspace-lock.ts';
import { forgetStamp } from '../state/uptodate-stamp.ts';
import { phase } from '../util/timing.ts';

export const STATE_DIR = '.rc1';

export interface Workspace {
  root: string;
  stateDir: string;
  profile: string;
  stat: StatCache;
  glob: GlobCache;
  compiler: ModuleCompiler;
  trace: TraceLog;
  cache: OutputCache;
  /** The remote tier of the cache for the build under way, if one is configured and on (build-command.ts sets it). */
  remote: RemoteCache | null;
  committer: OutputCommitter;
  lock: WorkspaceLock;
  config: LoadedConfig;
  pipeline: ResolvedPipeline;
  salt: string;
  decideEnv(forced: ReadonlySet<string>): DecideEnv;
  /** Persist the stat, glob and compile caches (and bring the compiled code's seed up to date). */
  saveCaches(): void;
  /** The folder of the compiled code's copy outside .rc1 (config/compiled-seed.ts), or null. */
  compiledSeed(): string | null;
}

/** A folder's inode and modification time (an entry made, renamed or removed changes it); '' when missing. */
function folderStamp(dir: string): string {
  const st = fs.statSync(dir, { bigint: true, throwIfNoEntry: false });
  return st ? `${st.ino}:${st.mtimeNs}` : '';
}

function loadSalt(stateDir: string): string {
  const file = path.join(stateDir, 'salt');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    const salt = crypto.randomBytes(16).toString('hex');
    fs.writeFileSync(file, salt, { flag: 'wx', mode: 0o600 });
    return salt;
  }
}

/** Every target's rule module exists (a typo is a usage error with a did-you-mean, not a crash). */
function checkRuleFiles(root: string, pipeline: ResolvedPipeline): void {
  const users = new Map<string, string[]>();
  for (const t of pipeline.targets.values()) (users.get(t.rule) ?? users.set(t.rule, []).get(t.rule)!).push(t.name);
  const diags: Diagnostic[] = [];
  for (const [rule, names] of users) {
    if (fs.existsSync(path.join(root, rule))) continue;
    const dir = path.posix.dirname(rule);
    let siblings: string[] = [];
    try {
      siblings = fs.readdirSync(path.join(root, dir)).filter((f) => /\.[cm]?[jt]s$/.test(f));
    } catch {
      /* no such directory */
    }
    const guess = didYouMean(path.posix.basename(rule), siblings);
    const t = pipeline.targets.get(names[0]!)!;
    diags.push({
      headline: `rule ${rule} of target${names.length > 1 ? 's' : ''} ${names.join(', ')} does not exist`,
      location: siteString(t.site, root) ?? PIPELINE_FILE,
      hint: guess
        ? `did you mean ${dir === '.' ? '' : dir + '/'}${guess}?`
        : `a rule is a workspace-relative module path${siblings.length ? `; ${dir}/ holds ${siblings.slice(0, 6).join(', ')}` : ''}`,
    });
  }
  if (diags.length) throw new UsageError(diags);
}

/**
 * The workspace root: -C DIR as given, else the nearest directory from the working directory
 * upwards that holds rc1.build.ts (as git finds .git), else the working directory itself.
 */
export function findRoot(dir: string | undefined, cwd: string = process.cwd()): string {
  if (dir !== undefined) return path.resolve(cwd, dir);
  for (let d = path.resolve(cwd); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, PIPELINE_FILE))) return d;
    if (path.dirname(d) === d) return path.resolve(cwd);
  }
}

export async function openWorkspace(root: string, env: NodeJS.ProcessEnv = process.env): Promise<Workspace> {
  const stateDir = path.join(root, STATE_DIR);
  fs.mkdirSync(stateDir, { recursive: true });
  phase('start');
  // A state dir without compiled code starts from the workspace's transpile cache, when there is
  // one (config/compiled-seed.ts); the seed is brought up to date when a command holding the lock
  // saves its caches, if the compiled folder changed since this point.
  const compiledDir = path.join(stateDir, 'compiled');
  let seedDir: string | null | undefined;
  const seedOf = (): string | null => (seedDir === undefined ? (seedDir = compiledSeedDir(root, env)) : seedDir);
  if (!fs.existsSync(compiledDir)) seedCompiled(compiledDir, seedOf());
  let compiledSeen = folderStamp(compiledDir); // as of the last seed update (or the open)
  phase('compiled code seed');
  const stat = new StatCache(root, path.join(stateDir, 'statcache.json'));
  phase('load stat cache');
  const glob = new GlobCache(root, path.join(stateDir, 'globcache.json'));
  const compiler = new ModuleCompiler(root, stateDir, stat);
  const hasPipeline = fs.existsSync(path.join(root, PIPELINE_FILE));
  const closure = hasPipeline ? await compiler.closure(PIPELINE_FILE).catch(() => ({})) : {};
  const profile = chooseProfile(
    env,
    hasPipeline ? await cachedProfiles(stateDir, closure, () => importPipeline(root, compiler)) : {},
    root,
  );
  const config = await loadConfigs(
    root,
    configFiles(root, profile),
    stat,
    path.join(stateDir, 'compiled', 'config.json'),
  );
  phase('load configs');
  const cacheFile = path.join(stateDir, 'compiled', 'pipeline-resolved.json');
  let pipeline: ResolvedPipeline | null = null;
  let key: string | null = null;
  if (hasPipeline) {
    key = pipelineCacheKey(stat, closure, config.key, profile);
    pipeline = readCachedPipeline(cacheFile, key, root);
  }
  if (!pipeline) {
    // Resolved again only when rc1.build.ts or a config file changed: then also check that every
    // config key is read by something (a target's params, the pipeline function, or freeFormConfig).
    const rec = recordingConfig(config.values);
    const decl = evaluatePipeline(await importPipeline(root, compiler), profile, { ...config, values: rec.config });
    // The rules' modules compile (esbuild, off this thread) while the declaration is checked;
    // withRuleParams then finds them compiled.
    compiler.prefetch(decl.targets.map((t) => normalizeRel(t.rule)));
    pipeline = await withRuleParams(
      { stateDir, compiler, config },
      await loadPipeline({ root, stateDir, compiler, config, profile, decl }),
    );
    const read = [
      ...[...pipeline.targets.values()].flatMap((t) => t.params),
      ...rec.reads,
      ...(decl.freeFormConfig ?? []),
    ];
    const unread = await unreadKeyDiagnostics(
      config.values,
      read,
      (k) => locateKey(root, config.files, k, 'key'),
      config.files,
    );
    if (unread.length) throw new UsageError(unread);
    if (key) writeCachedPipeline(cacheFile, key, pipeline);
  } else pipeline = await withRuleParams({ stateDir, compiler, config }, pipeline);
  checkRuleFiles(root, pipeline);
  phase('load pipeline');
  const trace = new TraceLog(path.join(stateDir, 'trace.log'));
  phase('load trace');
  const cache = new OutputCache(path.join(stateDir, 'cache'));
  const committer = new OutputCommitter(root, path.join(stateDir, 'journal'), trace, stat, path.join(stateDir, 'tmp'));
  const lock = new WorkspaceLock(path.join(stateDir, 'lock'));
  // What was compiled before the lock is looked for on disk again once it is held: the holder
  // before may have swept files no saved index named (ModuleCompiler.sweep). And the up-to-date
  // stamp goes: whatever this command changes, no later command line may take the state before
  // it for up to date (state/uptodate-stamp.ts).
  lock.onAcquired = () => {
    forgetStamp(stateDir);
    compiler.revalidate();
  };
  const salt = loadSalt(stateDir);
  const ws: Workspace = {
    root,
    stateDir,
    profile,
    stat,
    glob,
    compiler,
    trace,
    cache,
    remote: null,
    committer,
    lock,
    config,
    pipeline,
    salt,
    decideEnv: (forced) => ({ root, pipeline, config, stat, glob, compiler, trace, cache, salt, env, forced }),
    saveCaches() {
      stat.save();
      glob.save(stat.durable);
      compiler.save();
      // A resident server keeps this workspace across commands: compared with the last update, not the open.
      const now = lock.holding ? folderStamp(compiledDir) : compiledSeen;
      if (now !== compiledSeen) {
        updateSeed(compiledDir, seedOf(), root);
        compiledSeen = now;
      }
    },
    compiledSeed: seedOf,
  };
  return ws;
}

/**
 * Before building or cleaning: every output and input of these targets (and the manifest dir)
 * must resolve, after symlinks, inside the workspace or a declared external root (usage error).
 */
export function assertPathsOnDisk(ws: Pick<Workspace, 'root' | 'pipeline'>, names: Iterable<string>): void {
  const diags = pathsOnDiskProblems(ws.pipeline, names, (t) => siteString(t.site, ws.root) ?? PIPELINE_FILE);
  if (diags.length) throw new UsageError(diags);
}

/**
 * Before building: no planned output may be a file of a rule's code closure (a local module a rule
 * imports), which a build would overwrite. The closures are the ones the fingerprints use (cached).
 * And no file a planned target's glob matches may lead out of the workspace through a symlink
 * (checked when the glob is walked; a cached, unchanged glob costs its directory stats only).
 */
export async function assertNoRuleSourceOutputs(
  ws: Pick<Workspace, 'root' | 'pipeline' | 'compiler' | 'glob'>,
  names: readonly string[],
): Promise<void> {
  for (const n of names) {
    const t = ws.pipeline.targets.get(n)!;
    for (const g of t.inputs) for (const it of g.items) if (it.kind === 'glob') await expandChecked(ws, t, it.pattern);
  }
  const rules = new Set<string>(); // many targets share a rule: one closure lookup per rule
  for (const n of names) rules.add(ws.pipeline.targets.get(n)!.rule);
  const sources = new Map<string, string>();
  const closures = await ws.compiler.compileMany([...rules]); // the ones not compiled yet: in one build
  for (const rule of rules) {
    const got = closures.get(rule);
    const files = got === undefined || got instanceof Error ? {} : got;
    for (const f of Object.keys(files)) if (!sources.has(f)) sources.set(f, rule);
  }
  const diags = [];
  for (const n of names) {
    const t = ws.pipeline.targets.get(n)!;
    for (const o of t.outputs) {
      const hit = sources.has(o.path)
        ? o.path
        : o.dir
          ? [...sources.keys()].find((f) => f.startsWith(o.path + '/'))
          : undefined;
      if (hit) {
        diags.push({
          headline: `target ${t.name}: output ${o.path} ${hit === o.path ? 'is' : 'would hold'} the source file ${hit} of rule ${sources.get(hit)}`,
          location: siteString(t.site, ws.root) ?? PIPELINE_FILE,
          hint: 'a build must not overwrite the code of a rule; write outputs under data/, reports/ or another folder of your own',
        });
      }
    }
  }
  if (diags.length) throw new UsageError(diags);
}
