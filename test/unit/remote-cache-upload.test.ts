// What the remote cache uploads after a local put (packages/engine/src/cache/remote/remote-cache.ts):
// an entry put() wrote is uploaded as told, without reading it back (its inline bytes, if any, are
// in it); only an entry a rule worker stored (told without its inline bytes) is read from disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { INLINE_MAX, OutputCache } from '../../packages/engine/src/cache/output-cache.ts';
import { RemoteCache } from '../../packages/engine/src/cache/remote/remote-cache.ts';
import { Signer, generateSigningKey, parsePrivateKey } from '../../packages/engine/src/cache/remote/signing.ts';
import type { BlobStore } from '../../packages/engine/src/cache/remote/store.ts';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

function rig() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-remote-upload-'));
  const local = new OutputCache(path.join(dir, 'cache'));
  const uploaded: { ns: string; key: string; body: Buffer | null }[] = [];
  const store: BlobStore = {
    describe: 'test store',
    getBytes: async () => null,
    has: async () => false,
    download: async () => null,
    close: async () => {},
    upload: async (ns, key, body) => {
      uploaded.push({ ns, key, body: Buffer.isBuffer(body) ? body : null });
      return 'stored';
    },
  };
  const signer = new Signer(parsePrivateKey(generateSigningKey().privateKey));
  const rc = new RemoteCache(store, local, 'readwrite', new Map(), signer, dir, 2);
  const warnings: string[] = [];
  rc.attach((e) => {
    if (e.event === 'warning') warnings.push(e.message);
  });
  /** Counts the reads of the local entry; `fail`: each read fails (an entry gone or unreadable). */
  const reads = { n: 0, fail: false };
  const get = local.get.bind(local);
  local.get = (key: string) => {
    reads.n++;
    return reads.fail ? null : get(key);
  };
  /** An output file `name` with `body`, in the rig's directory. */
  const file = (name: string, body: Buffer): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, body);
    return p;
  };
  return { dir, local, rc, uploaded, warnings, reads, file };
}

const entryFor = (key: string, body: Buffer) => ({
  target: 't',
  key,
  result: 'ok' as const,
  outputs: [{ path: 'out/o.bin', dir: false, sha256: sha(body), size: body.length }],
});

test('an entry put() wrote with no inline output is uploaded without reading it back: an unreadable local entry refuses nothing', async () => {
  const r = rig();
  try {
    const big = Buffer.alloc(INLINE_MAX + 1, 7); // stored as an object: no inline bytes
    const src = r.file('big.bin', big);
    r.reads.fail = true;
    r.local.put(entryFor('a'.repeat(64), big), () => src);
    const stats = await r.rc.drain();
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(stats.notUploaded, []);
    assert.equal(r.reads.n, 0, 'the entry is not read back');
    assert.equal(stats.uploaded.entries, 1);
    assert.deepEqual(r.uploaded.map((u) => `${u.ns} ${u.key}`).sort(), [`ac ${'a'.repeat(64)}`, `cas ${sha(big)}`]);
  } finally {
    fs.rmSync(r.dir, { recursive: true, force: true });
  }
});

test('an entry a rule worker stored is read back for its inline bytes, which are uploaded; when that read fails it is not uploaded, with a warning', async () => {
  const r = rig();
  try {
    const small = Buffer.from('small output\n');
    const key = 'b'.repeat(64);
    // As a worker does: the entry with its inline bytes written, then stored() told without them.
    r.local.putEntry({ ...entryFor(key, small), inline: { [sha(small)]: small.toString('base64') } });
    r.local.stored(entryFor(key, small));
    let stats = await r.rc.drain();
    assert.equal(r.reads.n, 1, 'read back once');
    assert.equal(stats.uploaded.entries, 1);
    assert.deepEqual(r.uploaded.find((u) => u.ns === 'cas')?.body, small);
    r.reads.fail = true;
    r.local.stored(entryFor('c'.repeat(64), small));
    stats = await r.rc.drain();
    assert.deepEqual(stats.notUploaded, ['t']);
    assert.match(
      r.warnings.join('\n'),
      /not uploaded to the remote cache: its local cache entry is gone or unreadable/,
    );
  } finally {
    fs.rmSync(r.dir, { recursive: true, force: true });
  }
});
