// Benchmark of the remote cache on the RC1 dev pipeline (issue 13): `rc1-build train` in a copy
// of this repository (lib/, rules/, configs/, templates/, data/raw/, rc1.build.ts) built from
// nothing with the remote cache readwrite (rules run, outputs uploaded to nginx on loopback), then
// a second, fresh copy restoring every target from that cache, then a no-op in the second copy
// and an edit of one template file there (templates/pack_v2/templates_math.json re-indented: other
// bytes, the same templates, so its readers rerun and early cutoff stops the rest). Prints the
// wall times and the ratio restore / rebuild, the requests nginx saw in each phase (from its
// access log: HEAD/GET/PUT by namespace and status, bytes, nginx's own time per request) and what
// the cache holds after one dev build (objects, sizes, entries, per target). One run of each: the dev build
// takes minutes on a shared machine, so the load average is printed beside the figures.
// Needs nginx and curl and the compiled engine; without them it says so (n/a).
// Run: node --import tsx bench/remote-cache-dev.ts
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSigningKey } from '../packages/engine/src/cache/remote/signing.ts';
import { fmtInt, fmtMs, loadNote, machineReport, runChild, table } from './util.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const RC1_BIN = join(REPO, 'packages', 'engine', 'bin', 'rc1-build.js');
const SERVERS = join(REPO, 'test', 'servers');
const PORT = Number(process.env.RC1_BENCH_PORT ?? 19187);
const JOBS = String(Math.min(2, availableParallelism()));
const COPY = ['rc1.build.ts', 'rules', 'lib', 'configs', 'data/raw', 'templates'];
const EDITED = 'templates/pack_v2/templates_math.json';

function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

console.log('## Remote cache on the RC1 dev pipeline (`rc1-build train`, nginx on loopback)\n');
console.log(machineReport());
if (!have('nginx') || !have('curl') || !fs.existsSync(join(REPO, 'packages', 'engine', 'dist', 'cli.js'))) {
  console.log('\nn/a: needs nginx and curl (apt-get install nginx curl) and the compiled engine (npm run build)');
  process.exit(0);
}

const root = fs.mkdtempSync(join(tmpdir(), 'rc1-bench-remote-dev-'));
fs.chmodSync(root, 0o755); // nginx's workers (nobody) must reach the store under it
const serverDir = join(root, 'nginx');
const url = `http://127.0.0.1:${PORT}`;
const key = generateSigningKey();
const env = { ...process.env, RC1_CACHE_SIGNING_KEY: key.privateKey };
const accessLog = join(serverDir, 'access.log');

function workspace(name: string): string {
  const dir = join(root, name);
  for (const p of COPY) fs.cpSync(join(REPO, p), join(dir, p), { recursive: true });
  const file = join(dir, 'rc1.build.ts');
  const text = fs.readFileSync(file, 'utf8');
  const anchor = '    report: { sections:';
  if (!text.includes(anchor))
    throw new Error(`rc1.build.ts no longer has "${anchor.trim()}": update bench/remote-cache-dev.ts`);
  fs.writeFileSync(
    file,
    text.replace(
      anchor,
      `    remoteCache: { url: '${url}', signingKeyEnv: 'RC1_CACHE_SIGNING_KEY', trustedKeys: { bench: '${key.publicKey}' } },\n${anchor}`,
    ),
  );
  return dir;
}

interface Phase {
  name: string;
  ms: number;
  summary: string;
  remote: string;
  load: string;
  log: string[];
}
let logOffset = 0;
/** The access log's lines since the last call. */
function newLogLines(): string[] {
  const all = fs.existsSync(accessLog) ? fs.readFileSync(accessLog, 'utf8') : '';
  const lines = all
    .slice(logOffset)
    .split('\n')
    .filter((l) => l && !l.startsWith('GET /healthz'));
  logOffset = all.length;
  return lines;
}

function phase(name: string, dir: string, mode: string): Phase {
  newLogLines();
  const r = runChild(process.execPath, [RC1_BIN, 'train', '-j', JOBS, `--remote-cache=${mode}`], {
    cwd: dir,
    env,
    maxBuffer: 1 << 28,
  });
  const out = r.stdout ?? '';
  const summary =
    out
      .split('\n')
      .filter((l) => l.startsWith('rc1-build:'))
      .pop() ?? '';
  if (r.status !== 0) throw new Error(`${name}: rc1-build train exited ${r.status}\n${out.slice(-4000)}\n${r.stderr}`);
  if (/warning: remote cache/.test(out))
    throw new Error(
      `${name}: unexpected warning:\n${out
        .split('\n')
        .filter((l) => l.startsWith('warning'))
        .join('\n')}`,
    );
  const remote = out.split('\n').find((l) => l.startsWith('remote ')) ?? '';
  return { name, ms: r.ms, summary, remote, load: loadavg()[0]!.toFixed(2), log: newLogLines() };
}

const MiB = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;

/** Requests by method, namespace and status, with bytes and nginx's time. */
function requestRows(p: Phase): string[][] {
  const by = new Map<string, { n: number; sent: number; recv: number; secs: number }>();
  for (const line of p.log) {
    const [method, uri, status, sent, recv, secs] = line.split(' ');
    const ns = uri?.split('/')[1] ?? '?';
    const k = `${method} /${ns}/ ${status}`;
    const v = by.get(k) ?? { n: 0, sent: 0, recv: 0, secs: 0 };
    v.n++;
    v.sent += Number(sent);
    v.recv += Number(recv);
    v.secs += Number(secs);
    by.set(k, v);
  }
  if (by.size === 0) return [[p.name, '(none)', '0', '—', '—', '—']];
  return [...by]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => [p.name, k, fmtInt(v.n), MiB(v.sent), MiB(v.recv), `${((v.secs / v.n) * 1000).toFixed(2)} ms`]);
}

function walk(dir: string): number[] {
  if (!fs.existsSync(dir)) return [];
  const sizes: number[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) sizes.push(fs.statSync(join(e.parentPath, e.name)).size);
  return sizes.sort((a, b) => a - b);
}

/** Per target, from the signed entries the server holds: output objects and their bytes. */
function manifest(store: string): string[][] {
  const rows: { target: string; objects: number; bytes: number; largest: number }[] = [];
  for (const name of fs.readdirSync(join(store, 'ac'))) {
    const env = JSON.parse(fs.readFileSync(join(store, 'ac', name), 'utf8')) as {
      entry: { target: string; outputs: { dir?: boolean; sha256: string; files?: Record<string, string> }[] };
    };
    const shas = new Set<string>();
    for (const o of env.entry.outputs) {
      if (o.dir) for (const sha of Object.values(o.files ?? {})) shas.add(sha);
      else shas.add(o.sha256);
    }
    const sizes = [...shas].map((sha) => fs.statSync(join(store, 'cas', sha)).size);
    rows.push({
      target: env.entry.target,
      objects: shas.size,
      bytes: sizes.reduce((a, b) => a + b, 0),
      largest: Math.max(0, ...sizes),
    });
  }
  rows.sort((a, b) => b.bytes - a.bytes || a.target.localeCompare(b.target));
  return rows.map((r) => [r.target, fmtInt(r.objects), fmtInt(r.bytes), fmtInt(r.largest)]);
}

try {
  fs.mkdirSync(serverDir);
  const up = spawnSync('bash', [join(SERVERS, 'nginx-up.sh')], {
    env: { ...process.env, DIR: serverDir, PORT: String(PORT), ACCESS_LOG: '1' },
    encoding: 'utf8',
  });
  if (up.status !== 0) throw new Error(`nginx-up.sh: ${up.stderr}`);
  const a = workspace('a');
  const b = workspace('b');
  const phases: Phase[] = [];
  phases.push(phase('build (rules run, readwrite)', a, 'readwrite'));
  const cas = walk(join(serverDir, 'store', 'cas'));
  const ac = walk(join(serverDir, 'store', 'ac'));
  const perTarget = manifest(join(serverDir, 'store'));
  phases.push(phase('fresh copy restoring (read)', b, 'read'));
  if (!/\b0 ran\b/.test(phases[1]!.summary))
    throw new Error(
      `the fresh copy ran rules instead of restoring everything: ${phases[1]!.summary}\n${phases[1]!.remote}`,
    );
  phases.push(phase('no-op in the copy (read)', b, 'read'));
  const edited = join(b, EDITED);
  const tpl = JSON.parse(fs.readFileSync(edited, 'utf8')) as unknown;
  fs.writeFileSync(edited, `${JSON.stringify(tpl, null, 1)}\n`); // same templates, other bytes: every reader of pack_v2 reruns, outputs may match
  phases.push(phase(`one-template edit in the copy (${EDITED}, readwrite)`, b, 'readwrite'));

  const [build, restore] = phases as [Phase, Phase];
  console.log(`\n\`rc1-build train -j ${JOBS}\`, dev profile, one run each (wall time of the whole CLI process):\n`);
  console.log(
    table(
      ['phase', 'wall (ms)', 'vs build', 'load (1 min) after', 'summary'],
      phases.map((p) => [
        p.name,
        fmtMs(p.ms),
        `${(p.ms / build.ms).toFixed(3)}×`,
        p.load,
        p.summary.replace(/^rc1-build: /, ''),
      ]),
    ),
  );
  console.log(
    `\nrestore / rebuild: ${(restore.ms / build.ms).toFixed(3)}× (${(build.ms / restore.ms).toFixed(1)} times faster)`,
  );
  for (const p of phases) if (p.remote) console.log(`${p.name}: ${p.remote.replace(/\s+/g, ' ')}`);
  console.log(
    "\nRequests nginx logged per phase (bytes as nginx counts them, headers included; time: nginx's $request_time, mean):\n",
  );
  console.log(
    table(['phase', 'request', 'count', 'bytes sent', 'bytes received', 'nginx time'], phases.flatMap(requestRows)),
  );
  const sum = (xs: number[]): number => xs.reduce((s, x) => s + x, 0);
  const q = (xs: number[], f: number): number => xs[Math.min(xs.length - 1, Math.floor(f * xs.length))] ?? 0;
  console.log("\nWhat one dev build leaves in the cache (the server's store after the first build):\n");
  console.log(
    table(
      ['namespace', 'objects', 'total', 'median', 'p90', 'largest', '≥ 1 MiB (HEAD before PUT)'],
      [
        [
          '/cas/ (outputs, by sha256)',
          fmtInt(cas.length),
          MiB(sum(cas)),
          `${fmtInt(q(cas, 0.5))} B`,
          `${fmtInt(q(cas, 0.9))} B`,
          MiB(cas.at(-1) ?? 0),
          fmtInt(cas.filter((s) => s >= 1 << 20).length),
        ],
        [
          '/ac/ (signed entries, one per target)',
          fmtInt(ac.length),
          MiB(sum(ac)),
          `${fmtInt(q(ac, 0.5))} B`,
          `${fmtInt(q(ac, 0.9))} B`,
          MiB(ac.at(-1) ?? 0),
          '—',
        ],
      ],
    ),
  );
  console.log(
    '\nPer target (from the signed /ac/ entries on the server; objects shared between targets count in each):\n',
  );
  console.log(table(['target', 'objects', 'bytes', 'largest object (bytes)'], perTarget));
  console.log(`\n${loadNote('at end')}`);
} finally {
  spawnSync('bash', [join(SERVERS, 'nginx-down.sh')], { env: { ...process.env, DIR: serverDir } });
  fs.rmSync(root, { recursive: true, force: true });
}
