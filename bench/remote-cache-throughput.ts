// Raw remote-cache client throughput: the engine's HttpStore (undici) and its node:http
// predecessor (bench/remote-cache-nodehttp-store.ts) against one `curl --parallel --parallel-max 16`
// process, on the same nginx (test/servers/nginx-up.sh, loopback), in one run, in turns. N × 4 KiB objects (random, so each has its own sha256), 16 requests in flight.
//   PUT: HttpStore.upload of a file in the blob dir (read, sent)     curl: upload-file, answer to /dev/null
//   GET: HttpStore.download into a fresh dir (hashed, sha256 checked  curl: -o <fresh dir>/<sha> (written,
//        against the key, written with O_EXCL, as the remote cache        not hashed)
//        restores objects)
// The store is constructed once and warmed (one pass of PUT and GET, untimed) before the timed
// rounds, as in a build, where the client lives as long as the build. curl's figure is its
// whole process (start, config parse, exit): `curl --version` is timed too, so its start-up cost
// can be taken out by the reader. Every round's GET writes into a new directory; the server's
// store is emptied before each PUT round (so every PUT creates its object, for both clients).
// Run: node --import tsx bench/remote-cache-throughput.ts [--rounds N] [--objects N] [--port P] [--tmp DIR] [--profile]
// (--profile writes a CPU profile of HttpStore's timed PUT+GET of each round to $TMPDIR/rc1-remote-cache-client-<round>.cpuprofile)
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpStore } from '../packages/engine/src/cache/remote/http-store.ts';
import type { BlobStore } from '../packages/engine/src/cache/remote/store.ts';
import { NodeHttpStore } from './remote-cache-nodehttp-store.ts';
import { fmtMs, hasFlag, loadNote, machineReport, runChild, summarize, table, toolVersion } from './util.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SERVERS = join(REPO, 'test', 'servers');
const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  if (i < 0) return dflt;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name}: expected a positive integer, got ${process.argv[i + 1]}`);
  return n;
};
const ROUNDS = arg('--rounds', 5);
const N = arg('--objects', 1000);
const PORT = arg('--port', 18413);
const INFLIGHT = 16;

function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

console.log('## Remote cache client throughput (nginx, loopback)\n');
console.log(machineReport());
if (!have('nginx') || !have('curl')) {
  console.log('\nn/a: needs nginx and curl (apt-get install nginx curl)');
  process.exit(0);
}
console.log(`curl: ${toolVersion('curl').split('\n')[0]}`);

// --tmp DIR: where the objects, the downloads and nginx's store live (e.g. /dev/shm, to take the
// disk out of the comparison on a machine whose disk others are using)
const tmpAt = process.argv.indexOf('--tmp');
const TMP = tmpAt > 0 ? process.argv[tmpAt + 1]! : tmpdir();
console.log(`objects, downloads and nginx's store under ${TMP}`);
const root = mkdtempSync(join(TMP, 'rc1-bench-tput-'));
chmodSync(root, 0o755);
const serverDir = join(root, 'nginx');
const url = `http://127.0.0.1:${PORT}`;
const stop = (): void => {
  spawnSync('bash', [join(SERVERS, 'nginx-down.sh')], { env: { ...process.env, DIR: serverDir } });
};

try {
  const up = spawnSync('bash', [join(SERVERS, 'nginx-up.sh')], {
    env: { ...process.env, DIR: serverDir, PORT: String(PORT) },
    encoding: 'utf8',
  });
  if (up.status !== 0) throw new Error(`nginx-up.sh: ${up.stderr}`);
  const blobDir = join(root, 'blobs');
  mkdirSync(blobDir);
  const shas: string[] = [];
  for (let i = 0; i < N; i++) {
    const b = randomBytes(4096);
    const sha = createHash('sha256').update(b).digest('hex');
    writeFileSync(join(blobDir, sha), b);
    shas.push(sha);
  }
  const emptyStore = (): void => rmSync(join(serverDir, 'store', 'cas'), { recursive: true, force: true });
  let dirs = 0;
  const freshDir = (): string => {
    const d = join(root, `dl${dirs++}`);
    mkdirSync(d);
    return d;
  };

  const opts = { url, headers: {}, timeoutMs: 10_000, maxSockets: INFLIGHT };
  const clients: { name: string; store: BlobStore }[] = [
    { name: 'rc1-build HttpStore (undici Pool)', store: new HttpStore(opts) },
    { name: 'before: node:http Agent (keep-alive)', store: new NodeHttpStore(opts) },
  ];
  const pool = async (fn: (sha: string) => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: INFLIGHT }, async () => {
        while (next < shas.length) await fn(shas[next++]!);
      }),
    );
    return performance.now() - t0;
  };
  const put = (store: BlobStore): Promise<number> =>
    pool((sha) => store.upload('cas', sha, { file: join(blobDir, sha), size: 4096 }));
  const get = (store: BlobStore): Promise<number> => {
    const dl = freshDir();
    return pool(async (sha) => {
      const got = await store.download('cas', sha, join(dl, sha));
      if (got?.sha256 !== sha) throw new Error(`download of ${sha} did not verify`);
    });
  };
  writeFileSync(
    join(root, 'put.cfg'),
    shas.map((s) => `upload-file = "${join(blobDir, s)}"\nurl = "${url}/cas/${s}"\noutput = "/dev/null"\n`).join(''),
  );
  const curl = (cfg: string): number => {
    const r = runChild('curl', ['-sf', '--parallel', '--parallel-max', String(INFLIGHT), '-K', cfg]);
    if (r.status !== 0) throw new Error(`curl -K ${cfg} exited ${r.status}: ${r.stderr}`);
    return r.ms;
  };
  const curlPut = (): number => curl(join(root, 'put.cfg'));
  const curlGet = (): number => {
    const dl = freshDir();
    const cfg = join(root, `get-${dirs}.cfg`);
    writeFileSync(cfg, shas.map((s) => `url = "${url}/cas/${s}"\noutput = "${join(dl, s)}"\n`).join(''));
    return curl(cfg);
  };

  // warm-up (untimed): connections, JIT, nginx's caches
  for (const c of clients) {
    emptyStore();
    await put(c.store);
    await get(c.store);
  }
  emptyStore();
  curlPut();
  curlGet();

  const profile = hasFlag('--profile');
  let session: import('node:inspector').Session | null = null;
  if (profile) {
    const { Session } = await import('node:inspector');
    session = new Session();
    session.connect();
    await new Promise<void>((r) => session!.post('Profiler.enable', () => r()));
  }
  const post = (m: string): Promise<unknown> =>
    new Promise((res, rej) => session!.post(m, (err, p) => (err ? rej(err) : res(p))));
  // per client (curl last): PUT and GET times of each round
  const t = [...clients.map(() => ({ put: [] as number[], get: [] as number[] })), { put: [], get: [] }] as {
    put: number[];
    get: number[];
  }[];
  const curlAt = clients.length;
  const start: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // a different order in every round: the first client in round r is client r mod (clients + 1)
    const order = Array.from({ length: clients.length + 1 }, (_, i) => (i + r) % (clients.length + 1));
    for (const i of order) {
      emptyStore();
      if (i === curlAt) {
        t[i]!.put.push(curlPut());
        t[i]!.get.push(curlGet());
      } else {
        if (session && i === 0) await post('Profiler.start');
        t[i]!.put.push(await put(clients[i]!.store));
        t[i]!.get.push(await get(clients[i]!.store));
        if (session && i === 0) {
          const p = (await post('Profiler.stop')) as { profile: unknown };
          const file = join(tmpdir(), `rc1-remote-cache-client-${r}.cpuprofile`);
          writeFileSync(file, JSON.stringify(p.profile));
          console.log(`CPU profile of round ${r}: ${file}`);
        }
      }
    }
    start.push(runChild('curl', ['--version']).ms);
  }
  for (const c of clients) await c.store.close();
  const rate = (ms: number): string => `${Math.round((N / ms) * 1000).toLocaleString('en-US')}/s`;
  const ratios = (e: number[], c: number[]): string => {
    const rs = e.map((x, i) => c[i]! / x);
    return `${summarize(rs).median.toFixed(2)}× (${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})`;
  };
  const cell = (xs: number[]): string => {
    const m = summarize(xs);
    return `${fmtMs(m.median)} (${fmtMs(m.best)}–${fmtMs(Math.max(...xs))})`;
  };
  console.log(
    `\n${N} × 4 KiB objects, ${INFLIGHT} in flight, ${ROUNDS} rounds (each client once a round, the order rotating), median (min–max) ms; ratio = curl's time / the client's, per round. The engine's clients verify sha256 on every GET and write with O_EXCL:\n`,
  );
  const names = [...clients.map((c) => c.name), `curl --parallel --parallel-max ${INFLIGHT} (one process each)`];
  console.log(
    table(
      ['client', 'PUT ms', 'GET ms', 'PUT/s', 'GET/s', 'PUT vs curl', 'GET vs curl'],
      names.map((name, i) => [
        name,
        cell(t[i]!.put),
        cell(t[i]!.get),
        rate(summarize(t[i]!.put).median),
        rate(summarize(t[i]!.get).median),
        i === curlAt ? '1.00×' : ratios(t[i]!.put, t[curlAt]!.put),
        i === curlAt ? '1.00×' : ratios(t[i]!.get, t[curlAt]!.get),
      ]),
    ),
  );
  console.log(
    `\ncurl's process start and exit (\`curl --version\`), included in its figures: median ${fmtMs(summarize(start).median)} ms`,
  );
  console.log(loadNote('at end'));
} finally {
  stop();
  rmSync(root, { recursive: true, force: true });
}
