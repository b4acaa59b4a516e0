// Remote cache benchmark, against a real nginx serving the Bazel HTTP cache protocol on loopback
// (test/servers/nginx-up.sh). In one run, on the 1 000-target graph of bench/graph-workspace.ts:
//   - a local build from clean (rules run; no remote cache)
//   - the same build filling the remote cache (readwrite: uploads, the build waits for them)
//   - a second, fresh workspace (a clone: same sources, no .rc1/) restoring every target from the
//     remote cache, and the first workspace after `clean` restoring from its local cache
// and the client's raw throughput (1 000 × 4 KiB objects, 16 in flight) against one
// `curl --parallel --parallel-max 16` process on the same server. Every figure is the wall time of
// the whole process; best of RUNS (interleaved). Needs nginx and curl; without them it says so.
// Run: node --import tsx bench/remote-cache.ts [--quick]
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpStore } from '../packages/engine/src/cache/remote/http-store.ts';
import { generateSigningKey } from '../packages/engine/src/cache/remote/signing.ts';
import { makeGraph, writeRc1Workspace } from './graph-workspace.ts';
import { fmtMs, hasFlag, loadNote, machineReport, runChild, table } from './util.ts';

const QUICK = hasFlag('--quick');
const RUNS = QUICK ? 1 : 3;
const REPO = fileURLToPath(new URL('..', import.meta.url));
const RC1_BIN = join(REPO, 'packages', 'engine', 'bin', 'rc1-build.js');
const SERVERS = join(REPO, 'test', 'servers');
const PORT = 19099;
const BLOBS = 1000;

function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

console.log('## Remote cache (nginx, Bazel HTTP cache protocol, loopback)\n');
console.log(machineReport());
if (!have('nginx') || !have('curl') || !existsSync(join(REPO, 'packages', 'engine', 'dist', 'cli.js'))) {
  console.log('\nn/a: needs nginx and curl (apt-get install nginx curl) and the compiled engine (npm run build)');
  process.exit(0);
}

const root = mkdtempSync(join(tmpdir(), 'rc1-bench-remote-'));
chmodSync(root, 0o755); // nginx's workers (nobody) must reach the store under it
const serverDir = join(root, 'nginx');
const start = (): void => {
  rmSync(serverDir, { recursive: true, force: true });
  const r = spawnSync('bash', [join(SERVERS, 'nginx-up.sh')], {
    env: { ...process.env, DIR: serverDir, PORT: String(PORT) },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`nginx-up.sh: ${r.stderr}`);
};
const stop = (): void => {
  spawnSync('bash', [join(SERVERS, 'nginx-down.sh')], { env: { ...process.env, DIR: serverDir } });
};
const url = `http://127.0.0.1:${PORT}`;
const key = generateSigningKey();
const env = { ...process.env, RC1_CACHE_SIGNING_KEY: key.privateKey, RC1_FSYNC: 'off' };
const graph = makeGraph();

function workspace(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeRc1Workspace(dir, graph, join(REPO, 'packages', 'engine'));
  const p = join(dir, 'rc1.build.ts');
  const text = spawnSync('cat', [p], { encoding: 'utf8' }).stdout;
  writeFileSync(
    p,
    text.replace(
      'export default definePipeline({',
      `export default definePipeline({\n  remoteCache: { url: '${url}', signingKeyEnv: 'RC1_CACHE_SIGNING_KEY', trustedKeys: { bench: '${key.publicKey}' } },`,
    ),
  );
  return dir;
}

function build(dir: string, args: string[]): number {
  const r = runChild(process.execPath, [RC1_BIN, ...args], { cwd: dir, env });
  if (r.status !== 0)
    throw new Error(`rc1-build ${args.join(' ')} in ${dir}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  if (/warning: remote cache/.test(r.stdout))
    throw new Error(
      `unexpected warning:\n${r.stdout
        .split('\n')
        .filter((l) => l.startsWith('warning'))
        .join('\n')}`,
    );
  return r.ms;
}

const HEAVY = 20;
const WORK_RULE = `import { defineRule } from 'rc1-build';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
export default defineRule({
  name: 'work', version: 1,
  run(ctx) {
    const block = Buffer.alloc(1 << 20, ctx.target);
    let h = createHash('sha256');
    for (let i = 0; i < 64; i++) h = createHash('sha256').update(h.digest()).update(block);
    const seed = h.digest();
    const out = Buffer.alloc(1 << 20);
    for (let i = 0; i < out.length; i += 32) seed.copy(out, i, 0, Math.min(32, out.length - i));
    writeFileSync(ctx.output('out/' + ctx.target + '.bin'), out);
  },
});
`;

function heavyWorkspace(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'rules'), { recursive: true });
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(join(REPO, 'packages', 'engine'), join(dir, 'node_modules', 'rc1-build'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{"name":"rc1-bench-heavy","private":true,"type":"module"}\n');
  writeFileSync(join(dir, 'rules', 'work.ts'), WORK_RULE);
  const targets = Array.from(
    { length: HEAVY },
    (_, i) => `    defineTarget({ name: 'w${i}', rule: 'rules/work.ts', outputs: ['out/w${i}.bin'] }),`,
  );
  writeFileSync(
    join(dir, 'rc1.build.ts'),
    [
      "import { definePipeline, defineTarget } from 'rc1-build';",
      'export default definePipeline({',
      `  remoteCache: { url: '${url}', signingKeyEnv: 'RC1_CACHE_SIGNING_KEY', trustedKeys: { bench: '${key.publicKey}' } },`,
      '  targets: [',
      ...targets,
      '  ],',
      '});',
      '',
    ].join('\n'),
  );
  return dir;
}

type Row = 'local' | 'upload' | 'remote' | 'localCache';
const best: Record<Row, number> = { local: Infinity, upload: Infinity, remote: Infinity, localCache: Infinity };
let restoredLine = '';
try {
  for (let run = 0; run < RUNS; run++) {
    start();
    const a = workspace(`a${run}`);
    const b = workspace(`b${run}`);
    const c = workspace(`c${run}`);
    best.local = Math.min(best.local, build(c, ['--remote-cache=off']));
    best.upload = Math.min(best.upload, build(a, ['--remote-cache=readwrite']));
    const t0 = performance.now();
    const r = runChild(process.execPath, [RC1_BIN, '--remote-cache=read'], { cwd: b, env });
    if (r.status !== 0 || !/0 ran, 1000 restored/.test(r.stdout))
      throw new Error(`clone restore did not restore everything:\n${r.stdout}\n${r.stderr}`);
    best.remote = Math.min(best.remote, performance.now() - t0);
    restoredLine = r.stdout.split('\n').find((l) => l.startsWith('remote ')) ?? '';
    build(a, ['clean']);
    best.localCache = Math.min(best.localCache, build(a, ['--remote-cache=off']));
    stop();
  }
  console.log(
    `\n1 000-target graph (concat rules), -j ${(await import('node:os')).availableParallelism()}, RC1_FSYNC=off, best of ${RUNS}:\n`,
  );
  const ratio = (x: number): string => `${(x / best.local).toFixed(2)}×`;
  console.log(
    table(
      ['case', 'wall (ms)', 'vs local build'],
      [
        ['local build from clean (rules run, no remote cache)', fmtMs(best.local), '1.00×'],
        ['same, filling the remote cache (readwrite, waits for uploads)', fmtMs(best.upload), ratio(best.upload)],
        ['fresh clone restoring every target from the remote cache', fmtMs(best.remote), ratio(best.remote)],
        ['after `clean`, restoring every target from the local cache', fmtMs(best.localCache), ratio(best.localCache)],
      ],
    ),
  );
  console.log(`\nthe clone's summary line: ${restoredLine}`);

  // Targets whose rules do real work: where a shared cache pays off.
  const heavy = { local: Infinity, remote: Infinity };
  for (let run = 0; run < RUNS; run++) {
    start();
    const [h1, h2] = [heavyWorkspace(`h1-${run}`), heavyWorkspace(`h2-${run}`)];
    heavy.local = Math.min(heavy.local, build(h1, ['--remote-cache=readwrite']));
    const r = runChild(process.execPath, [RC1_BIN, '--remote-cache=read'], { cwd: h2, env });
    if (r.status !== 0 || !new RegExp(`0 ran, ${HEAVY} restored`).test(r.stdout))
      throw new Error(`heavy clone restore:\n${r.stdout}\n${r.stderr}`);
    heavy.remote = Math.min(heavy.remote, r.ms);
    stop();
  }
  console.log(
    `\n${HEAVY} targets, each hashing 64 MiB in its rule (~0.2 s of CPU) and writing 1 MiB, best of ${RUNS}:\n`,
  );
  console.log(
    table(
      ['case', 'wall (ms)', 'vs local build'],
      [
        ['build, rules run (filling the remote cache)', fmtMs(heavy.local), '1.00×'],
        [
          'fresh clone restoring every target from the remote cache',
          fmtMs(heavy.remote),
          `${(heavy.remote / heavy.local).toFixed(2)}×`,
        ],
      ],
    ),
  );

  // Raw client throughput: the engine's HttpStore (16 in flight, keep-alive, warmed) vs curl --parallel,
  // one run (bench/remote-cache-throughput.ts measures it in rotating rounds, with the node:http baseline).
  start();
  const blobDir = join(root, 'blobs');
  mkdirSync(blobDir);
  const shas: string[] = [];
  for (let i = 0; i < BLOBS; i++) {
    const b = randomBytes(4096);
    const sha = createHash('sha256').update(b).digest('hex');
    writeFileSync(join(blobDir, sha), b);
    shas.push(sha);
  }
  const store = new HttpStore({ url, headers: {}, timeoutMs: 10_000, maxSockets: 16 });
  const pool = async (fn: (sha: string) => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < shas.length) await fn(shas[next++]!);
      }),
    );
    return performance.now() - t0;
  };
  // One untimed pass first (JIT, connections), as in a build, where the client lives as long as the
  // build; then the store is emptied, so the timed PUTs create their objects as curl's do.
  const warm = join(root, 'dl-warm');
  mkdirSync(warm);
  await pool((sha) => store.upload('cas', sha, { file: join(blobDir, sha), size: 4096 }));
  await pool((sha) => store.download('cas', sha, join(warm, sha)));
  rmSync(join(serverDir, 'store', 'cas'), { recursive: true, force: true });
  const putMs = await pool((sha) => store.upload('cas', sha, { file: join(blobDir, sha), size: 4096 }));
  const dl = join(root, 'dl');
  mkdirSync(dl);
  const getMs = await pool(async (sha) => {
    const got = await store.download('cas', sha, join(dl, sha));
    if (got?.sha256 !== sha) throw new Error(`download of ${sha} did not verify`);
  });
  await store.close();
  const cfgPut = shas
    .map((s) => `upload-file = "${join(blobDir, s)}"\nurl = "${url}/cas/${s}"\noutput = "/dev/null"`)
    .join('\n');
  const cfgGet = shas.map((s) => `url = "${url}/cas/${s}"\noutput = "${join(root, 'curl-dl', s)}"`).join('\n');
  writeFileSync(join(root, 'put.cfg'), cfgPut);
  writeFileSync(join(root, 'get.cfg'), cfgGet);
  mkdirSync(join(root, 'curl-dl'));
  rmSync(join(serverDir, 'store', 'cas'), { recursive: true, force: true });
  const curlPut = runChild('curl', ['-sf', '--parallel', '--parallel-max', '16', '-K', join(root, 'put.cfg')]);
  const curlGet = runChild('curl', ['-sf', '--parallel', '--parallel-max', '16', '-K', join(root, 'get.cfg')]);
  if (curlPut.status !== 0 || curlGet.status !== 0) throw new Error(`curl failed: ${curlPut.stderr} ${curlGet.stderr}`);
  stop();
  const rate = (ms: number): string => `${Math.round((BLOBS / ms) * 1000).toLocaleString('en-US')}/s`;
  console.log(
    `\n${BLOBS} × 4 KiB objects, 16 in flight, one run (the engine's client verifies sha256 on every GET):\n`,
  );
  console.log(
    table(
      ['client', 'PUT (ms)', 'GET (ms)', 'PUT vs curl', 'GET vs curl'],
      [
        [
          'rc1-build HttpStore (undici Pool, keep-alive)',
          `${fmtMs(putMs)} (${rate(putMs)})`,
          `${fmtMs(getMs)} (${rate(getMs)})`,
          `${(curlPut.ms / putMs).toFixed(2)}×`,
          `${(curlGet.ms / getMs).toFixed(2)}×`,
        ],
        [
          'curl --parallel --parallel-max 16 (one process)',
          `${fmtMs(curlPut.ms)} (${rate(curlPut.ms)})`,
          `${fmtMs(curlGet.ms)} (${rate(curlGet.ms)})`,
          '1.00×',
          '1.00×',
        ],
      ],
    ),
  );
  console.log(`\n${loadNote('at end')}`);
} finally {
  stop();
  rmSync(root, { recursive: true, force: true });
}
