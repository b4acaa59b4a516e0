// The remote cache in an S3 bucket, against a real Ceph RGW (test/servers/ceph-rgw-up.sh, ~13 s
// to start, so one server for the file): conditional writes never let one writer replace
// another's object; a second workspace restores everything a first one built; two workspaces
// building at once both succeed and leave a cache a third restores from without a refusal.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { S3Store } from '../../packages/engine/src/cache/remote/s3-store.ts';
import { type CephRgw, startCephRgw } from '../helpers/cache-servers.ts';
import { CI_KEY, READER_ENV, TARGETS, WRITER_ENV, filesContaining, remoteRig } from '../helpers/remote-cache-rig.ts';
import { CLI } from '../helpers/rig.ts';

type Ev = Record<string, unknown>;
const remoteStats = (events: Ev[]): Record<string, unknown> =>
  (events.find((e) => e.event === 'remote') as { stats: Record<string, unknown> }).stats;

const present = ['ceph-mon', 'ceph-osd', 'radosgw'].every(
  (b) => spawnSync('sh', ['-c', `command -v ${b}`]).status === 0,
);
const missing = present
  ? false
  : 'Ceph RGW is not installed (apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw)';
if (missing && process.env.CI === 'true') throw new Error(`${missing}: CI must install it (.ci/run)`);

let rgw: CephRgw | null = null;
let client: S3Client;
const S3_ENV = (): Record<string, string> => ({
  AWS_ACCESS_KEY_ID: rgw!.accessKey,
  AWS_SECRET_ACCESS_KEY: rgw!.secretKey,
  AWS_EC2_METADATA_DISABLED: 'true',
});
let bucketSeq = 0;
async function bucket(): Promise<string> {
  const name = `rc1-test-${process.pid}-${++bucketSeq}`;
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}
const s3 = (opts: Record<string, unknown> = {}): Record<string, unknown> => ({
  endpoint: rgw!.endpoint,
  forcePathStyle: true,
  ...opts,
});

before(() => {
  if (missing) return;
  rgw = startCephRgw();
  client = new S3Client({
    region: 'us-east-1',
    endpoint: rgw.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: rgw.accessKey, secretAccessKey: rgw.secretKey },
  });
});
after(() => {
  client?.destroy();
  rgw?.stop();
});

test("concurrent conditional writes of one key: exactly one is stored, the others find it there, and its bytes are the winner's", {
  skip: missing,
}, async () => {
  const b = await bucket();
  Object.assign(process.env, S3_ENV());
  const stores = Array.from(
    { length: 8 },
    () =>
      new S3Store({
        url: `s3://${b}/team`,
        endpoint: rgw!.endpoint,
        forcePathStyle: true,
        timeoutMs: 10_000,
        maxSockets: 4,
      }),
  );
  try {
    for (const ns of ['ac', 'cas'] as const) {
      const key = createHash('sha256').update(ns).digest('hex');
      const bodies = stores.map((_, i) => Buffer.from(`writer ${i} `.repeat(1000 + i)));
      const results = await Promise.all(stores.map((s, i) => s.upload(ns, key, bodies[i]!)));
      assert.equal(results.filter((r) => r === 'stored').length, 1, `${ns}: ${results.join(' ')}`);
      assert.equal(results.filter((r) => r === 'exists').length, 7);
      const winner = results.indexOf('stored');
      assert.ok(
        (await stores[0]!.getBytes(ns, key))!.equals(bodies[winner]!),
        `${ns}: the stored object is the winner's`,
      );
      // a later writer never replaces it; an explicit replace (an object found corrupt) does
      assert.equal(await stores[1]!.upload(ns, key, Buffer.from('late')), 'exists');
      assert.equal(await stores[1]!.upload(ns, key, Buffer.from('repaired'), { replace: true }), 'stored');
      assert.equal((await stores[2]!.getBytes(ns, key))!.toString(), 'repaired');
    }
    const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-s3-')), 'blob');
    assert.equal(await stores[0]!.download('cas', 'f'.repeat(64), tmp), null, 'a missing object is a miss');
    assert.equal(await stores[0]!.has('cas', 'f'.repeat(64)), false);
    fs.rmSync(path.dirname(tmp), { recursive: true });
  } finally {
    for (const s of stores) await s.close();
  }
});

test('a second workspace restores every target from the S3 cache and runs no rule; the secret key appears nowhere', {
  skip: missing,
}, async () => {
  const b = await bucket();
  const url = `s3://${b}/team/rc1`;
  const first = remoteRig({ url, mode: 'readwrite', auth: false, s3: s3() });
  const second = remoteRig({ url, auth: false, s3: s3({ requestChecksumCalculation: 'WHEN_REQUIRED' }) });
  try {
    const w = first.run(['--json'], { ...WRITER_ENV, ...S3_ENV() });
    assert.equal(w.code, 0, w.stdout + w.stderr);
    assert.equal((remoteStats(w.events) as { uploaded: { entries: number } }).uploaded.entries, TARGETS.length);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: b, Prefix: 'team/rc1/ac/' }));
    assert.equal(listed.KeyCount, TARGETS.length);
    const r = second.run([], { ...READER_ENV, ...S3_ENV() });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(second.runs(), []);
    assert.match(r.stdout, new RegExp(`0 ran, ${TARGETS.length} restored`));
    assert.match(
      r.stdout,
      new RegExp(`remote   s3://${b}/team/rc1 at http://127\\.0\\.0\\.1:17480 \\(read\\): ${TARGETS.length} restored`),
    );
    assert.equal(second.read('out/tree/two.bin'), first.read('out/tree/two.bin'));
    const m = JSON.parse(second.read('reports/build/manifest.json')) as {
      targets: Record<string, { builtBy?: { key: string } }>;
    };
    assert.equal(m.targets.after_gate!.builtBy?.key, CI_KEY.keyId);
    for (const out of [w.stdout, w.stderr, r.stdout, r.stderr]) assert.ok(!out.includes(rgw!.secretKey));
    assert.deepEqual(filesContaining(second.dir, rgw!.secretKey), []);
  } finally {
    first.cleanup();
    second.cleanup();
  }
});

test('two workspaces building at once into one bucket both succeed, and a third restores from it without a refusal', {
  skip: missing,
}, async () => {
  const b = await bucket();
  const url = `s3://${b}`;
  const rigs = [0, 1, 2].map((i) => remoteRig({ url, mode: i < 2 ? 'readwrite' : 'read', auth: false, s3: s3() }));
  try {
    const env = { ...process.env, ...WRITER_ENV, ...S3_ENV() };
    const runs = await Promise.all(
      rigs.slice(0, 2).map(
        (rig) =>
          new Promise<{ code: number | null; out: string }>((resolve) => {
            const p = spawn(process.execPath, [CLI, '--json'], {
              cwd: rig.dir,
              env: { ...env, RC1_TEST_COUNTER: rig.counter },
            });
            let out = '';
            p.stdout.on('data', (d: Buffer) => {
              out += d;
            });
            p.stderr.on('data', (d: Buffer) => {
              out += d;
            });
            p.on('close', (code) => resolve({ code, out }));
          }),
      ),
    );
    for (const r of runs) assert.equal(r.code, 0, r.out);
    const third = rigs[2]!.run(['--json'], { ...READER_ENV, ...S3_ENV() });
    assert.equal(third.code, 0, third.stdout + third.stderr);
    assert.deepEqual(rigs[2]!.runs(), []);
    const st = remoteStats(third.events) as { hits: number; refused: number };
    assert.equal(st.hits, TARGETS.length);
    assert.equal(st.refused, 0);
  } finally {
    for (const r of rigs) r.cleanup();
  }
});
