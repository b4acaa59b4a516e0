// The node's side of staging 'remote-cache' (packages/engine/src/runner/slurm/remote-staging.ts):
// what a scratch workspace holds once the inputs are fetched into it, whatever an earlier run left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BlobStore, Body } from '../../packages/engine/src/cache/remote/store.ts';
import {
  type RemoteStagingSpec,
  fetchInputs,
  fetchOutput,
  scratchMapper,
  stageInputs,
} from '../../packages/engine/src/runner/slurm/remote-staging.ts';

/** An in-memory store: objects by key, downloads written with O_EXCL like the real ones. */
class MemStore implements BlobStore {
  readonly describe = 'memory';
  readonly objects = new Map<string, Buffer>();
  async download(_ns: string, key: string, dest: string): Promise<{ sha256: string; size: number } | null> {
    const b = this.objects.get(key);
    if (!b) return null;
    fs.writeFileSync(dest, b, { flag: 'wx' });
    return { sha256: createHash('sha256').update(b).digest('hex'), size: b.length };
  }
  async getBytes(_ns: string, key: string): Promise<Buffer | null> {
    return this.objects.get(key) ?? null;
  }
  async has(_ns: string, key: string): Promise<boolean> {
    return this.objects.has(key);
  }
  async upload(_ns: string, key: string, body: Body): Promise<'stored'> {
    this.objects.set(key, Buffer.isBuffer(body) ? body : fs.readFileSync(body.file));
    return 'stored';
  }
  async close(): Promise<void> {}
}

function setup(): {
  root: string;
  ws: string;
  keep: string;
  store: MemStore;
  stageAndFetch: () => Promise<void>;
  done: () => void;
} {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-staging-ws-'));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-staging-node-'));
  fs.mkdirSync(path.join(root, 'data'));
  fs.writeFileSync(path.join(root, 'mod.js'), 'export default 1\n');
  fs.writeFileSync(path.join(root, 'data/a.txt'), 'a');
  fs.writeFileSync(path.join(root, 'data/b.txt'), 'b');
  const store = new MemStore();
  const ws = path.join(scratch, 'ws');
  const map = scratchMapper(root, ws);
  const keep = map(path.join(root, '.rc1/state/t'));
  const job = { module: path.join(root, 'mod.js'), inputs: { data: [path.join(root, 'data')] } };
  return {
    root,
    ws,
    keep,
    store,
    stageAndFetch: async () => {
      const s = await stageInputs(store, job);
      const spec: RemoteStagingSpec = { remote: { url: 'x' }, resultKey: 'k', scratch, files: s.files, links: s.links };
      await fetchInputs(store, spec, { ws, keep, map });
    },
    done: () => {
      fs.rmSync(root, { recursive: true, force: true });
      fs.rmSync(scratch, { recursive: true, force: true });
    },
  };
}

test("a file deleted from an input directory since a stopped job's run is gone from the next job's scratch workspace; the rule's state dir stays", async () => {
  const s = setup();
  try {
    await s.stageAndFetch(); // run 1, stopped by a signal: its scratch dir stays on the node
    fs.mkdirSync(s.keep, { recursive: true });
    fs.writeFileSync(path.join(s.keep, 'checkpoint'), 'step 2');
    fs.writeFileSync(path.join(s.ws, 'left-by-the-rule.txt'), 'x');
    fs.rmSync(path.join(s.root, 'data/b.txt'));
    await s.stageAndFetch(); // the next build's job on the same node, same dir
    assert.deepEqual(fs.readdirSync(path.join(s.ws, 'data')).sort(), ['a.txt']);
    assert.deepEqual(fs.readdirSync(s.ws).sort(), ['.rc1', 'data', 'mod.js']);
    assert.equal(fs.readFileSync(path.join(s.keep, 'checkpoint'), 'utf8'), 'step 2', 'the state dir is kept');
  } finally {
    s.done();
  }
});

test('a symbolic link an earlier run left where an input directory goes is removed, never written through', async () => {
  const s = setup();
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-staging-outside-'));
  try {
    fs.writeFileSync(path.join(outside, 'a.txt'), 'precious');
    fs.mkdirSync(s.ws, { recursive: true });
    fs.symlinkSync(outside, path.join(s.ws, 'data'));
    // a link where the state dir's parent goes is not followed either
    fs.symlinkSync(outside, path.join(s.ws, '.rc1'));
    await s.stageAndFetch();
    assert.equal(fs.lstatSync(path.join(s.ws, 'data')).isDirectory(), true);
    assert.deepEqual(fs.readdirSync(path.join(s.ws, 'data')).sort(), ['a.txt', 'b.txt']);
    assert.deepEqual(fs.readdirSync(outside), ['a.txt'], 'nothing outside the scratch workspace changed');
    assert.equal(fs.readFileSync(path.join(outside, 'a.txt'), 'utf8'), 'precious');
  } finally {
    s.done();
    fs.rmSync(outside, { recursive: true, force: true });
  }
});

test("an output directory's listing naming '.', '..' or a path through '..' is refused before anything is fetched", async () => {
  const store = new MemStore();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-staging-out-'));
  try {
    const body = Buffer.from('x');
    const sha = createHash('sha256').update(body).digest('hex');
    store.objects.set(sha, body);
    for (const rel of ['.', '..', 'a/..', 'a/./b', '../x', 'a//b', '/etc/x', '']) {
      const sent = {
        path: 'out/d',
        dir: true as const,
        sha256: sha,
        size: 1,
        listing: { files: { [rel]: [sha, 1] as [string, number] } },
      };
      await assert.rejects(
        fetchOutput(store, { tmp: path.join(tmp, 'd') }, sent),
        /outside the directory/,
        `listing entry ${JSON.stringify(rel)}`,
      );
    }
    const ok = {
      path: 'out/d',
      dir: true as const,
      sha256: sha,
      size: 1,
      listing: { files: { 'a/b': [sha, 1] as [string, number] } },
    };
    await fetchOutput(store, { tmp: path.join(tmp, 'd') }, ok);
    assert.equal(fs.readFileSync(path.join(tmp, 'd/a/b'), 'utf8'), 'x');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
