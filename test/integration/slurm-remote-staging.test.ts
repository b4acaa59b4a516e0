// Slurm targets with `staging: 'remote-cache'`: the job's node does not use the build's workspace;
// the rule's module and inputs travel to it through the remote cache (a real nginx speaking the
// Bazel HTTP cache protocol, test/servers/nginx-up.sh, on port 18413 or RC1_TEST_NGINX_PORT), the job runs the rule in a
// scratch workspace on the node and uploads its outputs and a result document, and the build
// brings the outputs back, checks every digest and commits them. On the real one-node Slurm cluster
// (test/helpers/slurm.ts) node and build share a disk, so the tests check that the rule saw only
// scratch paths, what nginx was asked (its access log), and that a corrupt object is refused.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { HttpStore } from '../../packages/engine/src/cache/remote/http-store.ts';
import { generateSigningKey, parsePrivateKey, Signer } from '../../packages/engine/src/cache/remote/signing.ts';
import { fetchResult, resultDocument, scratchJobDir } from '../../packages/engine/src/runner/slurm/remote-staging.ts';
import { type Nginx, startNginx } from '../helpers/cache-servers.ts';
import { TestRig } from '../helpers/rig.ts';
import {
  COUNT_RULE,
  type Cluster,
  jobFields,
  requeueAndRelease,
  slurmSkip,
  startCluster,
  waitFor,
} from '../helpers/slurm.ts';

const NGINX_MISSING =
  process.env.CI === 'true'
    ? false
    : !fs.existsSync('/usr/sbin/nginx') && 'nginx is not installed (apt-get install nginx)';
const skip = slurmSkip || NGINX_MISSING;
/** nginx's port: RC1_TEST_NGINX_PORT, so that two checkouts can run this file at once. */
const PORT = Number(process.env.RC1_TEST_NGINX_PORT ?? 18413);

let cluster: Cluster | null = null;
let nginx: Nginx | null = null;
before(() => {
  if (skip) return;
  cluster = startCluster();
  nginx = startNginx({ port: PORT, accessLog: true });
});
after(() => {
  cluster?.stop();
  nginx?.stop();
});
afterEach((t) => cluster?.afterTest(t)); // a failed test prints and keeps the cluster's logs

const KEY = generateSigningKey();

const RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({
  name: 'stage', version: 1,
  run(ctx) {
    const src = ctx.inputs('src')[0];
    const big = ctx.inputs('big')[0];
    ctx.log('stage: input at ' + src);
    ctx.log('stage: root ' + ctx.root + ', cwd ' + process.cwd() + ', job ' + (process.env.SLURM_JOB_ID ?? '-'));
    const text = fs.readFileSync(src, 'utf8');
    if (text.startsWith('fail')) throw new Error('stage: the input asks this rule to fail');
    const bytes = fs.readFileSync(big);
    fs.writeFileSync(ctx.output('out/upper.txt'), text.toUpperCase());
    const dir = ctx.output('out/tree/');
    fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'sub', 'sum.txt'), bytes.length + ' bytes\\n');
    fs.writeFileSync(path.join(dir, 'copy.bin'), bytes);
    fs.symlinkSync('sub/sum.txt', path.join(dir, 'latest'));
    return { summary: text.length + ' chars' };
  },
});
`;

function rig(input: string, scratch: string, signing: boolean, url = nginx!.url): TestRig {
  return new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  remoteCache: { url: '${url}', ${signing ? `signingKeyEnv: 'RC1_TEST_SIGNING_KEY', trustedKeys: { ci: '${KEY.publicKey}' }` : ''} },
  targets: [
    defineTarget({ name: 'stage', rule: 'rules/stage.ts', inputs: { src: 'data/in.txt', big: 'data/big.bin' },
      outputs: ['out/upper.txt', 'out/tree/'],
      executor: { kind: 'slurm', partition: 'main', mem: '300M', time: '10', pollS: 0.2, graceS: 5,
                  staging: 'remote-cache', scratch: '${scratch}' } }),
  ],
});
`,
    'rules/stage.ts': RULE,
    'data/in.txt': input,
  });
}

function bigInput(r: TestRig, seed: string): Buffer {
  const b = Buffer.alloc(2 << 20);
  for (let i = 0; i < b.length; i += 32) createHash('sha256').update(`${seed}${i}`).digest().copy(b, i);
  fs.writeFileSync(path.join(r.dir, 'data/big.bin'), b);
  return b;
}

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** The job's dir on the (one) node: <scratch>/rc1-<uid>/rc1-<target>-<12 hex of host and workspace>. */
const jobDirOf = (scratch: string, r: TestRig, target: string): { top: string; dir: string } =>
  scratchJobDir(scratch, { uid: process.getuid?.() ?? 0, host: os.hostname(), root: r.dir }, target);

/** The requests nginx logged since `from` lines: "METHOD /ns/<key> status". */
function requests(from: number): string[] {
  const lines = fs.readFileSync(path.join(nginx!.dir, 'access.log'), 'utf8').split('\n').filter(Boolean);
  return lines.slice(from).map((l) => l.split(' ').slice(0, 3).join(' '));
}
const logLength = (): number =>
  fs.existsSync(path.join(nginx!.dir, 'access.log'))
    ? fs.readFileSync(path.join(nginx!.dir, 'access.log'), 'utf8').split('\n').filter(Boolean).length
    : 0;

test("staging 'remote-cache': the job fetches module and inputs by digest into its scratch dir, the outputs come back through the cache, verified, and are committed", {
  skip,
}, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-node-scratch-'));
  const r = rig('hello remote staging\n', scratch, true);
  try {
    const big = bigInput(r, 'one');
    const from = logLength();
    const res = r.run(['-v'], { RC1_TEST_SIGNING_KEY: KEY.privateKey });
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const id = /slurm: submitted job (\d+)/.exec(res.stdout)?.[1];
    assert.ok(id, res.stdout);
    assert.equal(jobFields(id).JobState, 'COMPLETED');
    // the rule ran in the node's scratch workspace, never in the build's
    const where = jobDirOf(scratch, r, 'stage');
    const ws = path.join(where.dir, 'ws');
    assert.match(res.stdout, new RegExp(`stage: input at ${ws}/data/in\\.txt`));
    assert.match(res.stdout, new RegExp(`stage: root ${ws}, cwd ${scratch}, job ${id}`));
    assert.doesNotMatch(res.stdout, new RegExp(`stage: .*${r.dir}`), 'no workspace path reached the rule');
    assert.match(
      res.stdout,
      /slurm: staged 3 files \(the rule's module and inputs\) through the remote cache http:\/\/127\.0\.0\.1:\d+ \(3 sent, 2\.0 MiB/,
    );
    assert.match(
      res.stdout,
      /rc1-build: stage: fetched 3 files \(the rule's module and inputs, 2\.0 MiB, sha256 checked\)/,
    );
    // the outputs, byte for byte, and the directory's link
    assert.equal(r.read('out/upper.txt'), 'HELLO REMOTE STAGING\n');
    assert.deepEqual(fs.readFileSync(path.join(r.dir, 'out/tree/copy.bin')), big);
    assert.equal(r.read('out/tree/sub/sum.txt'), `${2 << 20} bytes\n`);
    assert.equal(fs.readlinkSync(path.join(r.dir, 'out/tree/latest')), 'sub/sum.txt');
    const manifest = JSON.parse(r.read('reports/build/manifest.json')) as {
      artifacts: { path: string; sha256: string }[];
    };
    assert.equal(manifest.artifacts.find((a) => a.path === 'out/upper.txt')?.sha256, sha('HELLO REMOTE STAGING\n'));
    // the job left nothing in its scratch dir once the build had its result
    assert.deepEqual(
      fs.readdirSync(where.top).filter((f) => f.startsWith('rc1-stage-')),
      [],
    );
    // this user's scratch dir on the node is this user's alone; the script holding the job file too
    assert.equal(fs.statSync(where.top).mode & 0o777, 0o700);
    assert.equal(fs.statSync(path.join(r.dir, '.rc1/slurm/stage/job.sh')).mode & 0o777, 0o700);
    // what nginx saw: the build sent the inputs (the 2 MiB one after a HEAD), the node fetched
    // them, sent the outputs (the 2 MiB copy is the input's object: HEAD found it) and its result
    const got = requests(from);
    const bigSha = sha(big);
    assert.ok(got.includes(`HEAD /cas/${bigSha} 404`), got.join('\n'));
    assert.ok(got.includes(`PUT /cas/${bigSha} 201`), got.join('\n'));
    assert.equal(
      got.filter((l) => l.startsWith(`GET /cas/${bigSha} 200`)).length,
      2,
      'node (input) and build (output)',
    );
    assert.ok(got.includes(`PUT /cas/${sha('hello remote staging\n')} 201`), got.join('\n'));
    assert.ok(got.includes(`GET /cas/${sha('HELLO REMOTE STAGING\n')} 200`), got.join('\n'));
    const results = got.filter((l) => l.startsWith('PUT /ac/'));
    assert.equal(results.length, 1, got.join('\n'));
    assert.ok(got.includes(`GET ${results[0]!.split(' ')[1]} 200`), 'the build read the result it was told of');
    // the result on the server is signed with the build's key
    const doc = JSON.parse(
      fs.readFileSync(path.join(nginx!.store, 'ac', results[0]!.split('/').pop()!.split(' ')[0]!), 'utf8'),
    ) as {
      signer?: string;
    };
    assert.match(doc.signer ?? '', /^ed25519:/);
    // the same job file never named the signing key
    assert.doesNotMatch(r.read('.rc1/slurm/stage/job.sh'), new RegExp(KEY.privateKey.slice(0, 20)));
  } finally {
    r.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test("staging 'remote-cache': a corrupt input object on the server is refused on the node and fails the target, naming it; a failing rule's error comes back", {
  skip,
}, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-node-scratch-'));
  const r = rig('corrupt case\n', scratch, false);
  try {
    const big = bigInput(r, 'two');
    // an object of 1 MiB or more that HEAD finds is not sent again: plant wrong bytes under its digest
    const cas = path.join(nginx!.store, 'cas');
    if (!fs.existsSync(cas)) {
      fs.mkdirSync(cas);
      if (process.getuid?.() === 0) fs.chownSync(cas, 65534, 65534); // nginx's workers run as nobody
    }
    fs.writeFileSync(path.join(nginx!.store, 'cas', sha(big)), Buffer.alloc(big.length, 7));
    const res = r.run([]);
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(
      res.stdout + res.stderr,
      new RegExp(
        `cannot stage the inputs on \\S+ from the remote cache http://127\\.0\\.0\\.1:${PORT}: input ${r.dir}/data/big\\.bin: object ${sha(big).slice(0, 12)}… arrived with sha256 ${sha(Buffer.alloc(big.length, 7)).slice(0, 12)}… \\(${big.length} bytes\\): corrupt download, refused`,
      ),
    );
    assert.equal(fs.existsSync(path.join(r.dir, 'out/upper.txt')), false);

    // a rule that throws on the node: its message comes back through the result document
    fs.rmSync(path.join(nginx!.store, 'cas', sha(big)));
    r.write('data/in.txt', 'fail please\n');
    const failed = r.run([]);
    assert.equal(failed.code, 1, failed.stdout + failed.stderr);
    assert.match(failed.stdout + failed.stderr, /stage: the input asks this rule to fail/);
  } finally {
    r.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test("a job's result document is refused when the build expects its own signature and it is unsigned, signed by another key, or made for another key", {
  skip,
}, async () => {
  const store = new HttpStore({ url: `${nginx!.url}`, headers: {}, timeoutMs: 5000, maxSockets: 2 });
  try {
    const mine = new Signer(parsePrivateKey(KEY.privateKey));
    const other = new Signer(parsePrivateKey(generateSigningKey().privateKey));
    const { createPublicKey } = await import('node:crypto');
    const pub = createPublicKey(parsePrivateKey(KEY.privateKey));
    const expect = { name: 'this build', id: mine.keyId, key: pub };
    const result = {
      format: 1,
      jobId: '7',
      restart: 0,
      host: 'n1',
      ms: 5,
      ok: false,
      error: { kind: 'rule-error', message: 'x' },
    } as const;
    const put = async (key: string, doc: Buffer): Promise<void> => {
      await store.upload('ac', key, doc);
    };
    const k = (n: string): string => sha(`result-${n}-${process.pid}`);
    await put(k('good'), resultDocument(k('good'), result, mine));
    assert.deepEqual(await fetchResult(store, k('good'), expect), result);
    await put(k('unsigned'), resultDocument(k('unsigned'), result, null));
    await assert.rejects(fetchResult(store, k('unsigned'), expect), /refused: unsigned/);
    assert.deepEqual(
      await fetchResult(store, k('unsigned'), null),
      result,
      'accepted unsigned when the build has no key',
    );
    await put(k('other'), resultDocument(k('other'), result, other));
    await assert.rejects(
      fetchResult(store, k('other'), expect),
      /refused: signed by ed25519:[0-9a-f]+, which is not in/,
    );
    await put(k('moved'), resultDocument(k('good'), result, mine));
    await assert.rejects(fetchResult(store, k('moved'), expect), /refused: signed for fingerprint/);
    assert.equal(await fetchResult(store, k('absent'), expect), null);
  } finally {
    await store.close();
  }
});

test("staging 'remote-cache': rules compiled together import shared chunks, and the chunks travel with the module", {
  skip,
}, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-node-scratch-'));
  const rule = (name: string): string => `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import { shout } from '../lib/shout.ts';
export default defineRule({
  name: '${name}', version: 1,
  run(ctx) { fs.writeFileSync(ctx.output('out/${name}.txt'), shout(fs.readFileSync(ctx.inputs('src')[0], 'utf8'), '${name}')); },
});
`;
  const executor = `executor: { kind: 'slurm', partition: 'main', mem: '300M', time: '10', pollS: 0.2, graceS: 5, staging: 'remote-cache', scratch: '${scratch}' }`;
  const r = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  remoteCache: { url: '${nginx!.url}' },
  targets: [
    defineTarget({ name: 'a', rule: 'rules/a.ts', inputs: { src: 'data/in.txt' }, outputs: ['out/a.txt'], ${executor} }),
    defineTarget({ name: 'b', rule: 'rules/b.ts', inputs: { src: 'data/in.txt' }, outputs: ['out/b.txt'], ${executor} }),
  ],
});
`,
    'rules/a.ts': rule('a'),
    'rules/b.ts': rule('b'),
    'lib/shout.ts':
      "export function shout(text: string, by: string): string {\n  return text.toUpperCase() + ' (' + by + ')';\n}\n",
    'data/in.txt': 'shared code\n',
  });
  try {
    const res = r.run(['-v']);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.equal(r.read('out/a.txt'), 'SHARED CODE\n (a)');
    assert.equal(r.read('out/b.txt'), 'SHARED CODE\n (b)');
    const records = JSON.parse(r.read('.rc1/compiled/closures-3.json')) as Record<string, { chunks?: string[] }>;
    const chunks = records['rules/a.ts']?.chunks ?? [];
    assert.ok(chunks.length > 0, 'the two rules were compiled together, into shared chunks');
    // each job staged its module, its chunks and its one input
    const staged = [...res.stdout.matchAll(/slurm: staged (\d+) files/g)].map((m) => Number(m[1]));
    assert.deepEqual(staged, [chunks.length + 2, chunks.length + 2], res.stdout);
  } finally {
    r.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test("staging 'remote-cache' without a remoteCache is a usage error naming the target; an unknown staging or a relative scratch names the field", () => {
  const decl = (executor: string, remote = ''): string => `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  ${remote}
  targets: [
    defineTarget({ name: 'stage', rule: 'rules/stage.ts', inputs: { src: 'data/in.txt' }, outputs: ['out/upper.txt'], executor: ${executor} }),
  ],
});
`;
  const r = new TestRig({ 'rules/stage.ts': RULE, 'data/in.txt': 'x\n' });
  try {
    r.write('rc1.build.ts', decl("{ kind: 'slurm', staging: 'remote-cache' }"));
    const none = r.run([]);
    assert.equal(none.code, 64, none.stdout + none.stderr);
    assert.match(
      none.stderr,
      /target stage: executor\.staging 'remote-cache' moves its inputs and outputs through the pipeline's remote cache, and definePipeline declares no remoteCache/,
    );
    r.write(
      'rc1.build.ts',
      decl("{ kind: 'slurm', staging: 'nfs' }", "remoteCache: { url: 'http://127.0.0.1:18413' },"),
    );
    const bad = r.run([]);
    assert.equal(bad.code, 64, bad.stdout + bad.stderr);
    assert.match(bad.stderr, /target stage: executor\.staging: 'shared-fs' or 'remote-cache'/);
    r.write(
      'rc1.build.ts',
      decl(
        "{ kind: 'slurm', staging: 'remote-cache', scratch: 'tmp' }",
        "remoteCache: { url: 'http://127.0.0.1:18413' },",
      ),
    );
    const rel = r.run([]);
    assert.equal(rel.code, 64, rel.stdout + rel.stderr);
    assert.match(rel.stderr, /scratch: an absolute path on the node/);
  } finally {
    r.cleanup();
  }
});

test("staging 'remote-cache': a requeued job resumes from the state dir in the node's scratch workspace", {
  skip,
}, async () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-node-scratch-'));
  const r = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  remoteCache: { url: '${nginx!.url}' },
  targets: [
    defineTarget({ name: 'count', rule: 'rules/count.ts', outputs: ['out/count.txt'],
      executor: { kind: 'slurm', partition: 'main', mem: '300M', time: '10', pollS: 0.2, graceS: 5,
                  staging: 'remote-cache', scratch: '${scratch}' } }),
  ],
});
`,
    'rules/count.ts': COUNT_RULE,
  });
  try {
    const child = r.spawn(['-v', 'count']);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exit = new Promise((res) => child.once('exit', (c) => res(c)));
    await waitFor('step 2 in the job', () => /count: step 2\b/.test(out));
    const id = /slurm: submitted job (\d+)/.exec(out)![1]!;
    // released only once the first run has stopped (on one node, the next run would share its scratch dir)
    await requeueAndRelease(id, () =>
      waitFor('the first run to stop', () =>
        /count: stopped; its scratch workspace \S+ stays for the next run/.test(out),
      ),
    );
    assert.equal(await exit, 0, out);
    assert.equal(jobFields(id).Restarts, '1');
    const state = path.join(jobDirOf(scratch, r, 'count').dir, 'ws', '.rc1', 'state', 'count');
    assert.match(out, new RegExp(`count: state in ${state}`), 'the state dir is in the scratch workspace');
    assert.match(out, /count: resuming after step [2-7]\n/);
    assert.match(r.read('out/count.txt'), /^counted to 8, started at 0, [2-7]\n$/);
    assert.equal(
      fs.existsSync(path.join(r.dir, '.rc1/state/count/step')),
      false,
      "the build's own state dir was not used",
    );
  } finally {
    r.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test("staging 'remote-cache' with the cache server down fails the target before any job is submitted, saying why", {
  skip,
}, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-node-scratch-'));
  const r = new TestRig({
    'rc1.build.ts': `import { definePipeline, defineTarget } from 'rc1-build';
export default definePipeline({
  remoteCache: { url: 'http://127.0.0.1:18414', timeoutMs: 2000 },
  targets: [
    defineTarget({ name: 'stage', rule: 'rules/stage.ts', inputs: { src: 'data/in.txt' }, outputs: ['out/upper.txt'],
      executor: { kind: 'slurm', partition: 'main', time: '10', staging: 'remote-cache', scratch: '${scratch}' } }),
  ],
});
`,
    'rules/stage.ts': RULE,
    'data/in.txt': 'x\n',
  });
  try {
    const res = r.run([]);
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(
      res.stdout + res.stderr,
      /stage: cannot stage the job's inputs through the remote cache \(staging 'remote-cache'\): connect ECONNREFUSED 127\.0\.0\.1:18414/,
    );
    assert.doesNotMatch(res.stdout, /submitted job/);
  } finally {
    r.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test("staging 'remote-cache': credentials in the cache's URL reach the job in its environment, never in job.sh; the node's log names the URL without them", {
  skip,
}, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-node-scratch-'));
  const basic = `Basic ${Buffer.from('rc1user:s3cret-pw').toString('base64')}`;
  const authed = startNginx({ port: PORT + 1, authHeader: basic });
  const r = rig('with credentials\n', scratch, false, authed.url.replace('http://', 'http://rc1user:s3cret-pw@'));
  try {
    bigInput(r, 'creds');
    const res = r.run(['-v']);
    // nginx answers 401 to a request without the header: the node's fetches and uploads had it
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.equal(r.read('out/upper.txt'), 'WITH CREDENTIALS\n');
    const script = r.read('.rc1/slurm/stage/job.sh');
    assert.doesNotMatch(script, /s3cret-pw|rc1user/);
    assert.doesNotMatch(script, new RegExp(Buffer.from('rc1user:s3cret-pw').toString('base64')));
    assert.doesNotMatch(res.stdout + res.stderr, /s3cret-pw/);
  } finally {
    r.cleanup();
    authed.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test("staging 'remote-cache': a per-user scratch dir on the node that is a symbolic link or another user's is refused, and nothing is written through it", {
  skip: skip || (process.getuid?.() !== 0 && 'needs root to make a directory owned by another user'),
}, () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-node-scratch-'));
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-elsewhere-'));
  const r = rig('planted\n', scratch, false);
  try {
    bigInput(r, 'planted');
    const { top } = jobDirOf(scratch, r, 'stage');
    fs.symlinkSync(elsewhere, top);
    let res = r.run(['-v']);
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(
      res.stdout + res.stderr,
      /is not a directory of \S+'s \(a symbolic link, or made by another user\): refused/,
    );
    assert.deepEqual(fs.readdirSync(elsewhere), [], 'nothing was written through the link');
    fs.rmSync(top);
    fs.mkdirSync(top, { mode: 0o777 });
    fs.chmodSync(top, 0o777);
    fs.chownSync(top, 65534, 65534); // nobody's
    res = r.run(['-v']);
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(res.stdout + res.stderr, /made by another user\): refused/);
    assert.deepEqual(fs.readdirSync(top), [], 'no job dir made in it');
    // once it is gone, the job makes its own
    fs.rmSync(top, { recursive: true });
    res = r.run(['-v']);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.equal(fs.statSync(top).mode & 0o777, 0o700);
  } finally {
    r.cleanup();
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(elsewhere, { recursive: true, force: true });
  }
});
