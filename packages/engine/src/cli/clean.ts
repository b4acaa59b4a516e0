// `rc1-build clean [TARGET…] [--cache]`: removes the named targets' outputs (all targets when
// none is named), their records, their state dirs (.rc1/state/<target>/: a training run's
// checkpoints and previous runs, say; all of .rc1/state/ when none is named) and any other state
// their rules declare under .rc1/ (`state`), and rewrites the manifest. Caches stay unless --cache: the
// output cache (so a clean followed by a build restores instead of re-running), rule caches
// declared `cache: true` (e.g. paid judge calls) and the compiled code's copy in
// node_modules/.cache (config/compiled-seed.ts; .rc1/compiled itself is always kept). A clean of everything also removes the engine's
// scratch (tmp, journal of an interrupted commit is recovered first) and names what it left.
// Every path removed or kept is printed. With -n (--dry-run) nothing is removed, locked or
// rewritten: every path that would be removed is listed with its size.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeManifest } from '../report/manifest.ts';
import { diskUsage, formatSize } from '../util/size.ts';
import { TARGET_STATE_ROOT, targetStateDir } from '../state/target-state-dir.ts';
import { rmrf } from '../util/fs.ts';
import { ENGINE_STATE, engineStateEntry } from '../state/engine-state.ts';
import { type Workspace, assertPathsOnDisk } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
}

export async function runClean(
  ws: Workspace,
  names: string[],
  cache: boolean,
  io: Io,
  dryRun = false,
): Promise<number> {
  // Never delete outside the workspace: an output under a symlink that leads out is refused.
  assertPathsOnDisk(ws, names.length ? names : ws.pipeline.order);
  if (!dryRun) ws.lock.acquire('rc1-build clean');
  try {
    if (!dryRun) {
      ws.trace.repair();
      try {
        ws.committer.recover();
      } finally {
        // The outputs the roll-forward replaced: their aside names' unlinks, done before clean goes
        // on, or before its error is answered when recovery throws.
        await ws.committer.freed();
      }
    }
    let bytes = 0;
    const all = !names.length;
    const targets = all ? ws.pipeline.order : names;
    const lines: string[] = [];
    const drop = (rel: string, what: string): void => {
      const abs = path.join(ws.root, rel);
      if (!fs.existsSync(abs)) return;
      const size = diskUsage(abs) ?? 0;
      bytes += size;
      if (!dryRun) rmrf(abs);
      lines.push(`  ${dryRun ? 'would remove' : 'removed'} ${rel} (${what}, ${formatSize(size)})`);
    };
    const keep = (rel: string, what: string, how: string): void => {
      if (fs.existsSync(path.join(ws.root, rel)))
        lines.push(`  ${dryRun ? 'would keep  ' : 'kept   '} ${rel} (${what}; ${how})`);
    };
    let removed = 0;
    let states = 0;
    const declared = new Set<string>();
    for (const n of targets) {
      const t = ws.pipeline.targets.get(n)!;
      for (const o of t.outputs) {
        const abs = path.join(ws.root, o.path);
        if (dryRun) {
          if (fs.existsSync(abs)) {
            removed++;
            drop(o.dir ? `${o.path}/` : o.path, `output of ${n}`);
          }
          continue;
        }
        if (fs.existsSync(abs)) {
          rmrf(abs);
          removed++;
        }
        ws.stat.forget(o.path);
      }
      if (!dryRun) ws.trace.remove(n);
      const own = targetStateDir(ws.stateDir, n);
      if (fs.existsSync(own)) {
        states++;
        drop(path.relative(ws.root, own), `state of ${n}`);
      }
      for (const st of t.state ?? []) {
        if (declared.has(st.path)) continue;
        declared.add(st.path);
        if (!st.cache) drop(st.path, `state of ${n}`);
        else if (cache) drop(st.path, `cache of ${n}`);
        else keep(st.path, `cache of ${n}`, '--cache removes it');
      }
    }
    if (all) {
      for (const t of ws.pipeline.targets.values()) for (const st of t.state ?? []) declared.add(st.path);
      drop(path.join('.rc1', 'tmp'), ENGINE_STATE.tmp!.what);
      if (fs.existsSync(path.join(ws.stateDir, TARGET_STATE_ROOT))) {
        states++;
        drop(path.join('.rc1', TARGET_STATE_ROOT), ENGINE_STATE[TARGET_STATE_ROOT]!.what);
      }
      if (cache) drop(path.join('.rc1', 'cache'), ENGINE_STATE.cache!.what);
      else keep(path.join('.rc1', 'cache'), ENGINE_STATE.cache!.what, '--cache removes it; rc1-build gc trims it');
      // The compiled code's copy outside .rc1 (config/compiled-seed.ts): a cache like the others.
      const seed = ws.compiledSeed();
      if (seed) {
        const rel = path.relative(ws.root, seed);
        if (cache) {
          drop(rel, 'compiled code kept outside .rc1 for a state dir made anew');
          if (!dryRun) fs.rmSync(`${seed}.root`, { force: true }); // which workspace it was for
        } else keep(rel, 'compiled code kept outside .rc1 for a state dir made anew', '--cache removes it');
      }
      // Anything else under .rc1/ that neither the engine nor a target declares is named, not removed.
      for (const e of fs.readdirSync(ws.stateDir)) {
        const rel = `.rc1/${e}`;
        if (engineStateEntry(e) || [...declared].some((d) => d === rel || d.startsWith(rel + '/'))) continue;
        lines.push(
          `  ${dryRun ? 'would leave ' : 'left   '} ${rel} (declared by no target; remove it by hand if it is not needed)`,
        );
      }
    }
    if (dryRun) {
      io.out(
        `clean -n (dry run, nothing removed): would remove ${removed} output${removed === 1 ? '' : 's'} of ${targets.length} target${targets.length === 1 ? '' : 's'}${states ? ' and their state' : ''}, ${formatSize(bytes)} in all\n`,
      );
      for (const l of lines) io.out(l + '\n');
      return 0;
    }
    writeManifest(ws, { commit: null, dirty: null });
    ws.trace.close();
    ws.saveCaches();
    io.out(
      `clean: removed ${removed} output${removed === 1 ? '' : 's'} of ${targets.length} target${targets.length === 1 ? '' : 's'}${states ? ` and their state (${path.relative(ws.root, path.join(ws.stateDir, TARGET_STATE_ROOT))}/)` : ''}\n`,
    );
    for (const l of lines) io.out(l + '\n');
    return 0;
  } finally {
    if (!dryRun) ws.lock.release();
  }
}
