// Checks what the targets of a build need from the machine (`requires`: env vars, endpoints,
// commands, config the declaration found unusable) before anything runs, so a build that cannot
// finish fails at once with one list of everything missing, not hours in with a stack. Only the
// targets that are going to run are checked: one that is up to date, with nothing upstream of it
// going to run, needs no key.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UserRequirement } from '../api/index.ts';
import { type Diagnostic, UsageError } from '../config/usage-error.ts';
import type { ResolvedPipeline } from '../graph/resolved.ts';
import { type DecideEnv, decide } from './decide.ts';

const CONNECT_TIMEOUT_MS = 2500;

export interface RequirementEnv {
  root: string;
  env: NodeJS.ProcessEnv;
  profile: string;
  /** Connects to host:port; resolves to an error message, or null when it connected. */
  connect?: (host: string, port: number) => Promise<string | null>;
}

async function tcpConnect(host: string, port: number): Promise<string | null> {
  const net = await import('node:net'); // loaded only when a target requires a URL
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (msg: string | null): void => {
      sock.destroy();
      resolve(msg);
    };
    sock.setTimeout(CONNECT_TIMEOUT_MS, () => done(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`));
    sock.once('connect', () => done(null));
    sock.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      /* next */
    }
  }
  return false;
}

/** What is wrong with one requirement, or null if it is met. */
async function unmet(r: UserRequirement, e: RequirementEnv): Promise<string | null> {
  if ('env' in r) {
    const v = e.env[r.env];
    if (v === undefined || v === '') return r.optional ? null : `$${r.env} is not set`;
    if (r.values && !r.values.some((x) => x.toLowerCase() === v.toLowerCase()))
      return `$${r.env} is not one of ${r.values.join(', ')}`;
    return null;
  }
  if ('url' in r) {
    const u = new URL(r.url);
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    const err = await (e.connect ?? tcpConnect)(u.hostname, port);
    return err ? `${r.url} is not reachable (${err})` : null;
  }
  if ('executable' in r) {
    const x = r.executable;
    if (x.includes('/')) {
      try {
        fs.accessSync(path.resolve(e.root, x), fs.constants.X_OK);
        return null;
      } catch {
        return `${x} is not an executable file`;
      }
    }
    return onPath(x, e.env) ? null : `${x} is not found on PATH`;
  }
  return `${r.config}: ${r.problem}`;
}

/** Targets of `plan` that are going to run: not fresh now, or downstream of one that is not. */
export async function targetsToRun(
  pipeline: ResolvedPipeline,
  plan: readonly string[],
  d: DecideEnv,
): Promise<Set<string>> {
  const run = new Set<string>();
  const inPlan = new Set(plan);
  const seen = new Set<string>();
  const visit = async (n: string): Promise<void> => {
    if (seen.has(n)) return;
    seen.add(n);
    const t = pipeline.targets.get(n)!;
    for (const dep of t.deps) if (inPlan.has(dep)) await visit(dep);
    if (t.deps.some((dep) => run.has(dep))) {
      run.add(n);
      return;
    }
    const decision = await decide(d, t).catch(() => null);
    if (decision?.kind !== 'fresh') run.add(n);
  };
  for (const n of plan) await visit(n);
  return run;
}

/** Throws one UsageError listing every unmet requirement of the targets that are going to run. */
export async function checkRequirements(
  pipeline: ResolvedPipeline,
  plan: readonly string[],
  d: DecideEnv,
  e: RequirementEnv,
): Promise<void> {
  if (!plan.some((n) => pipeline.targets.get(n)!.requires?.length)) return;
  const running = await targetsToRun(pipeline, plan, d);
  // The same requirement of many targets is checked and reported once, with all their names.
  const byReq = new Map<string, { req: UserRequirement; targets: string[] }>();
  for (const n of plan) {
    if (!running.has(n)) continue;
    for (const req of pipeline.targets.get(n)!.requires ?? []) {
      const k = JSON.stringify(req);
      (byReq.get(k) ?? byReq.set(k, { req, targets: [] }).get(k)!).targets.push(n);
    }
  }
  const results = await Promise.all([...byReq.values()].map(async (x) => ({ ...x, problem: await unmet(x.req, e) })));
  const missing = results.filter((x) => x.problem !== null);
  if (missing.length === 0) return;
  const lines = missing.map((m) => `${m.problem} — ${m.req.why} (needed by ${m.targets.join(', ')})`);
  const d0: Diagnostic = {
    headline: `${missing.length} requirement${missing.length === 1 ? '' : 's'} of the targets to build ${missing.length === 1 ? 'is' : 'are'} not met (profile ${e.profile}); nothing was run`,
    context: { missing: lines.join('\n') },
    hint: 'provide each one and build again; targets that are already up to date need none of them',
  };
  throw new UsageError(d0);
}
