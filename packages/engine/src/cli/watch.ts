// `rc1-build watch [TARGET…]`: build, then watch every source the targets declare (input files
// and the directories their globs walk, the rules' code closures, configs/, rc1.build.ts) with
// chokidar, and rebuild — debounced — when one changes. Content hashes decide what reruns, and
// each run prints its reason. A failing rule or a broken declaration is reported and the watch
// waits for the next change; edits made while a build runs are queued and built right after it;
// Ctrl-C stops a running build cleanly (as a plain build does). What the engine writes itself
// (outputs, rule logs, ERROR reports, the manifest and sidecars, .rc1/) never wakes it, so a glob
// over the whole workspace does not rebuild from the build's own writes.
import * as path from 'node:path';
import { globBase } from '../hash/glob-cache.ts';
import { type ResolvedPipeline, closureOf } from '../graph/resolved.ts';
import { UsageError, didYouMean } from '../config/usage-error.ts';
import { PIPELINE_FILE } from '../config/load-pipeline.ts';
import { printDiagnostics, printInternalError } from '../report/diagnostics.ts';
import { type BuildCommandOptions, type Io, type Running, runBuildOnce } from './build-command.ts';
import { watchLauncher } from './launcher-exit.ts';
import { STATE_DIR, type Workspace, openWorkspace } from '../workspace/workspace.ts';
import { forgetMadeDirs } from '../util/fs.ts';

const DEBOUNCE_MS = 200;

/** Workspace-relative paths to watch for the given targets. */
export async function watchSet(ws: Workspace, targets: string[]): Promise<Set<string>> {
  const out = new Set<string>([PIPELINE_FILE, 'configs']);
  for (const f of Object.keys(await ws.compiler.closure(PIPELINE_FILE))) out.add(f);
  for (const n of closureOf(ws.pipeline, targets)) {
    const t = ws.pipeline.targets.get(n)!;
    for (const f of Object.keys(await ws.compiler.closure(t.rule))) out.add(f);
    for (const g of t.inputs) {
      for (const it of g.items) {
        if (it.kind === 'file' && !it.producer) out.add(it.path);
        else if (it.kind === 'glob') out.add(globBase(it.pattern).base);
      }
    }
  }
  return out;
}

/** A temporary or staged name the engine writes beside a file (writeFileAtomic, the output commit). */
const ENGINE_TEMP = /\.(tmp-\d+-[0-9a-z]+-[0-9a-z]+|rc1-new|rc1-old)$/;

/**
 * Whether a workspace-relative path is one the engine itself writes during a build — its state
 * (.rc1/), the targets' outputs, rule logs (logs/<target>.log), ERROR_*.json reports, the manifest
 * and its sidecars, and the temporary names of any of these — so that a watch whose glob covers
 * the workspace never rebuilds because of its own writes.
 */
export function engineWritten(
  rel: string,
  p: Pick<ResolvedPipeline, 'producers' | 'targets' | 'manifestDir'> | null,
): boolean {
  if (rel === STATE_DIR || rel.startsWith(`${STATE_DIR}/`)) return true;
  const name = rel.replace(ENGINE_TEMP, '');
  if (name !== rel && name !== '') return true;
  if (/^reports\/ERROR_[^/]*\.json$/.test(rel)) return true;
  if (!p) return false;
  if (rel === p.manifestDir || rel.startsWith(`${p.manifestDir}/`)) return true;
  if (p.producers.has(rel)) return true;
  const log = /^logs\/(.+)\.log$/.exec(rel);
  if (log && p.targets.has(log[1]!)) return true;
  for (const [out, owner] of p.producers) {
    if (rel.startsWith(out + '/') && p.targets.get(owner)!.outputs.some((x) => x.dir && x.path === out)) return true;
  }
  return false;
}

/** Whether a folder is one the engine creates to hold what it writes (see engineWritten). */
export function engineFolder(rel: string, p: Pick<ResolvedPipeline, 'producers' | 'manifestDir'> | null): boolean {
  if (rel === 'logs' || rel === 'reports') return true;
  if (!p) return false;
  const under = (x: string): boolean => x.startsWith(rel + '/');
  return under(p.manifestDir + '/') || [...p.producers.keys()].some(under);
}

function checkTargets(ws: Workspace, names: string[]): void {
  for (const name of names) {
    if (!ws.pipeline.targets.has(name)) {
      const guess = didYouMean(name, ws.pipeline.targets.keys());
      throw new UsageError({
        headline: `unknown target ${name}`,
        ...(guess ? { hint: `did you mean ${guess}?` } : {}),
      });
    }
  }
}

export async function runWatch(
  root: string,
  first: Workspace,
  args: string[],
  o: BuildCommandOptions,
  io: Io,
): Promise<number> {
  const chokidar = await import('chokidar');
  const say = (msg: string, extra: Record<string, unknown> = {}): void => {
    if (o.json) io.out(JSON.stringify({ event: 'watch', message: msg, ...extra }) + '\n');
    else io.out(`watch: ${msg}\n`);
  };
  let ws: Workspace | null = first;
  // The last pipeline loaded: the engine's writes of a build are still reported after it ended.
  let known: ResolvedPipeline | null = first.pipeline;
  let running: Running | null = null;
  const changed = new Set<string>();
  let wake: (() => void) | null = null;
  let timer: NodeJS.Timeout | null = null;
  const ignored = (file: string): boolean => {
    const rel = path.relative(root, path.resolve(root, file)).split(path.sep).join('/');
    if (rel.startsWith('..') || rel === '') return false;
    if (/(^|\/)(node_modules|\.git)(\/|$)/.test(rel)) return true;
    return engineWritten(rel, known);
  };
  const watcher = chokidar.watch([], { ignoreInitial: true, atomic: true, ignored, cwd: root });
  watcher.on('all', (ev, p) => {
    if (ignored(path.resolve(root, p))) return;
    // A folder the engine creates to write into (logs/, reports/, an output's parent) changes
    // nothing by appearing; what is written inside it is judged file by file.
    if (ev === 'addDir' && engineFolder(p.split(path.sep).join('/'), known)) return;
    changed.add(p.split(path.sep).join('/'));
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      wake?.();
    }, DEBOUNCE_MS);
  });
  let watched = new Set<string>();
  const stop = (sig: NodeJS.Signals): void => {
    void (async () => {
      if (running) await running.interrupt();
      await watcher.close();
      process.exit(sig === 'SIGINT' ? 130 : 143);
    })();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  watchLauncher(() => stop('SIGTERM'));
  const follow = (next: Set<string>): void => {
    const add = [...next].filter((p) => !watched.has(p));
    const remove = [...watched].filter((p) => !next.has(p));
    if (add.length) watcher.add(add.map((p) => path.resolve(root, p)));
    if (remove.length) watcher.unwatch(remove.map((p) => path.resolve(root, p)));
    watched = next;
  };
  for (;;) {
    try {
      ws ??= await openWorkspace(root);
      known = ws.pipeline;
      checkTargets(ws, args);
      const targets = args.length ? args : ws.pipeline.defaultTargets;
      // Watched before the build starts, so an edit made while it runs is seen.
      follow(await watchSet(ws, targets));
      // What changed before this point is read by this build; what changes from here on is
      // queued for the next one.
      changed.clear();
      forgetMadeDirs(); // a folder made by an earlier build may have been removed since (rm -rf out)
      await runBuildOnce(ws, { ...o, targets }, io, {
        installSignals: false,
        onStart: (r) => {
          running = r;
        },
      });
      running = null;
    } catch (e) {
      running = null;
      if (e instanceof UsageError) printDiagnostics(e.diagnostics, io, o.json);
      else printInternalError(e, io);
      follow(new Set([...watched, PIPELINE_FILE, 'configs', 'rules']));
    }
    ws = null;
    // Changes made while the build ran are not lost: once they settle, build again at once.
    const queued = changed.size > 0;
    if (!queued)
      say(`watching ${watched.size} paths; waiting for changes (Ctrl-C to stop)`, {
        state: 'waiting',
        paths: watched.size,
      });
    if (!queued || timer)
      await new Promise<void>((r) => {
        wake = r;
      });
    wake = null;
    const files = [...changed].sort();
    say(
      `${files.length} changed${queued ? ' during the build' : ''}: ${files.slice(0, 5).join(', ')}${files.length > 5 ? ', …' : ''}; rebuilding`,
      { state: 'rebuilding', changed: files, queued },
    );
  }
}
