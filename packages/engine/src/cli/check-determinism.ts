// `rc1-build check-determinism TARGET…`: builds what the targets need (an ordinary build), then
// runs each target's rule twice, through the same worker harness as a build, into two scratch
// dirs (.rc1/determinism/<target>/run1 and run2: outputs and a fresh, empty state dir each, so a
// resumable rule cannot reuse the first run's state), and compares the outputs' digests. A target
// whose two runs differ is reported with the first differing file, byte, line and column and the
// two lines, its scratch runs are kept for inspection, and its verdict is recorded in
// .rc1/determinism.json, which the remote cache's upload path reads (cache/determinism.ts
// mayUpload): such a target is not uploaded by default. Nothing in the workspace is changed: the
// rule's outputs never leave the scratch dirs, no record or cache entry is written.
// Exit status: 0 every target deterministic, 1 one differs or a rule failed, 64 usage error.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pickParams } from '../config/load-configs.ts';
import { UsageError } from '../config/usage-error.ts';
import { codeHash } from '../hash/fingerprint.ts';
import { decide, resolveInputs } from '../rebuild/decide.ts';
import type { HashedOutput } from '../runner/protocol.ts';
import { WorkerPool } from '../runner/worker-pool.ts';
import {
  type DeterminismVerdict,
  type FirstDifference,
  outputDifference,
  recordVerdicts,
} from '../cache/determinism.ts';
import { redactor } from '../util/redact-secrets.ts';
import { rmrf } from '../util/fs.ts';
import { type BuildCommandOptions, runBuildOnce } from './build-command.ts';
import { type Workspace, openWorkspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  tty: boolean;
}

type Checked =
  | {
      target: string;
      ok: true;
      verdict: DeterminismVerdict;
      outputs: { path: string; sha256: string }[];
      ms: [number, number];
      kept?: string;
    }
  | { target: string; ok: false; error: string; log: string[] };

const SCRATCH = 'determinism';

function fmtMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function describe(d: FirstDifference): string[] {
  if (d.kind === 'only-in-run-1' || d.kind === 'only-in-run-2')
    return [`${d.file}: written by run ${d.kind.at(-1)} only`];
  if (d.kind === 'link') return [`${d.file}: a symbolic link differs`, `run 1: ${d.run1}`, `run 2: ${d.run2}`];
  const at =
    d.byte === undefined
      ? ''
      : d.line !== undefined
        ? ` at byte ${d.byte} (line ${d.line}, column ${d.column})`
        : ` at byte ${d.byte} (binary)`;
  return [
    `${d.file}: first difference${at}`,
    ...(d.run1 !== undefined ? [`run 1: ${JSON.stringify(d.run1)}`, `run 2: ${JSON.stringify(d.run2)}`] : []),
  ];
}

async function checkOne(ws: Workspace, name: string, pool: WorkerPool): Promise<Checked> {
  const t = ws.pipeline.targets.get(name)!;
  const env = ws.decideEnv(new Set());
  const d = await decide(env, t);
  if (d.kind === 'missing-input') return { target: name, ok: false, error: d.error, log: [] };
  const module = await ws.compiler.compiled(t.rule);
  const inputs = await resolveInputs(env, t);
  const abs = Object.fromEntries(Object.entries(inputs).map(([g, ps]) => [g, ps.map((p) => path.resolve(ws.root, p))]));
  const envVals: Record<string, string | undefined> = {};
  for (const n of [...t.env, ...t.secrets]) envVals[n] = process.env[n];
  const redact = redactor(t.secrets.map((n) => process.env[n]));
  const scratch = path.join(ws.stateDir, SCRATCH, name);
  rmrf(scratch);
  const runs: { outputs: HashedOutput[]; ms: number }[] = [];
  for (const k of [1, 2]) {
    const dir = path.join(scratch, `run${k}`);
    const tmpDir = path.join(dir, 'out');
    fs.mkdirSync(tmpDir, { recursive: true });
    const log: string[] = [];
    const t0 = performance.now();
    const res = await pool.run(
      {
        target: name,
        gate: t.gate,
        ...(t.report ? { report: t.report } : {}),
        module,
        ruleFile: t.rule,
        root: ws.root,
        stateDir: path.join(dir, 'state'),
        profile: ws.profile,
        params: pickParams(ws.config.values, t.params),
        args: t.args,
        forced: false,
        codeHash: codeHash(d.fp),
        env: envVals,
        inputs: abs,
        tmpDir,
        tmpPrefix: 'o-',
        outputs: t.outputs.map((o, i) => ({
          path: o.path,
          dir: o.dir,
          tmp: path.join(tmpDir, `o-${i}-${path.basename(o.path)}`),
          ...(o.name ? { name: o.name } : {}),
        })),
      },
      {
        log: (l) => {
          log.push(redact(l));
          if (log.length > 400) log.splice(0, 200);
        },
        progress: () => undefined,
      },
    );
    if (!res.ok) {
      rmrf(scratch);
      return {
        target: name,
        ok: false,
        error: redact(res.error.kind === 'rule-error' && res.error.stack ? res.error.stack : res.error.message),
        log: log.slice(-20),
      };
    }
    runs.push({ outputs: res.value.outputs, ms: performance.now() - t0 });
  }
  const differences = runs[0]!.outputs
    .map((o, i) => outputDifference(o, runs[1]!.outputs[i]!))
    .filter((x): x is FirstDifference => x !== null);
  const verdict: DeterminismVerdict = {
    target: name,
    deterministic: differences.length === 0,
    key: d.key,
    checkedAt: new Date().toISOString(),
    ...(differences.length ? { differences } : {}),
  };
  if (verdict.deterministic) rmrf(scratch);
  return {
    target: name,
    ok: true,
    verdict,
    outputs: runs[0]!.outputs.map((o) => ({ path: o.path, sha256: o.sha256 })),
    ms: [runs[0]!.ms, runs[1]!.ms],
    ...(verdict.deterministic ? {} : { kept: path.relative(ws.root, scratch) }),
  };
}

export async function runCheckDeterminism(
  root: string,
  ws0: Workspace,
  targets: string[],
  o: BuildCommandOptions,
  io: Io,
): Promise<number> {
  if (targets.length === 0)
    throw new UsageError({
      headline: 'check-determinism: name the targets to check',
      hint: 'rc1-build check-determinism scores train (each is built twice; what they need is built first)',
    });
  // What the targets need is built (and cached) the ordinary way first.
  const deps = [...new Set(targets.flatMap((n) => ws0.pipeline.targets.get(n)!.deps))];
  if (deps.length) {
    const code = await runBuildOnce(ws0, { ...o, targets: deps, forced: new Set() }, io, { installSignals: true });
    if (code !== 0) {
      io.err(
        `rc1-build: check-determinism: not checked: what ${targets.join(', ')} need did not build (exit ${code})\n`,
      );
      return code;
    }
  }
  const ws = deps.length ? await openWorkspace(root) : ws0;
  if (o.waitS)
    await ws.lock.acquireWaiting(o.command, o.waitS, (h) =>
      io.err(`rc1-build: waiting for the build holding this workspace (pid ${h.pid} on ${h.host}) to finish\n`),
    );
  else ws.lock.acquire(o.command);
  const pool = new WorkerPool(1, new URL('./worker.js', import.meta.url));
  const onSignal = (): void => {
    void pool.abortAll(2000).finally(() => {
      ws.lock.release();
      process.exit(130);
    });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const results: Checked[] = [];
  try {
    if (!o.json)
      io.out(
        `rc1-build: check-determinism: ${targets.length} target${targets.length === 1 ? '' : 's'}, each built twice in scratch dirs under .rc1/${SCRATCH}/\n`,
      );
    for (const name of targets) {
      const r = await checkOne(ws, name, pool);
      results.push(r);
      if (o.json) {
        io.out(
          `${JSON.stringify(r.ok ? { event: 'determinism', target: name, deterministic: r.verdict.deterministic, key: r.verdict.key, outputs: r.outputs, ms: r.ms.map(Math.round), ...(r.verdict.differences ? { differences: r.verdict.differences } : {}), ...(r.kept ? { kept: r.kept } : {}) } : { event: 'fail', target: name, error: r.error, lastLines: r.log })}\n`,
        );
        continue;
      }
      if (!r.ok) {
        io.out(`FAILED  ${name}: ${r.error}\n${r.log.map((l) => `  ${name} | ${l}\n`).join('')}`);
      } else if (r.verdict.deterministic) {
        io.out(
          `ok      ${name}: ${r.outputs.length} output${r.outputs.length === 1 ? '' : 's'} identical in both runs (${fmtMs(r.ms[0])} + ${fmtMs(r.ms[1])})\n`,
        );
      } else {
        const n = r.verdict.differences!.length;
        io.out(
          `DIFFERS ${name}: ${n === r.outputs.length && n === 1 ? 'its output differs' : `${n} of ${r.outputs.length} outputs differ`} between two runs on the same inputs\n`,
        );
        for (const d of r.verdict.differences!)
          io.out(
            describe(d)
              .map((l, i) => `${i === 0 ? '        ' : '          '}${l}\n`)
              .join(''),
          );
        io.out(
          `        both runs are kept in ${r.kept}/run1 and run2; ${name} will not be uploaded to a remote cache\n`,
        );
      }
    }
    const checked = results.filter((r): r is Extract<Checked, { ok: true }> => r.ok);
    recordVerdicts(
      ws.stateDir,
      checked.map((r) => r.verdict),
    );
    const differ = checked.filter((r) => !r.verdict.deterministic).length;
    const failed = results.length - checked.length;
    if (o.json)
      io.out(
        `${JSON.stringify({ event: 'end', ok: differ + failed === 0, deterministic: checked.length - differ, differ, failed })}\n`,
      );
    else
      io.out(
        `rc1-build: check-determinism: ${checked.length - differ} deterministic, ${differ} differ${failed ? `, ${failed} failed` : ''}; verdicts in .rc1/determinism.json\n`,
      );
    return differ + failed === 0 ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await pool.close();
    ws.saveCaches();
    ws.lock.release();
  }
}
