// The remote cache over the Bazel HTTP cache protocol, against a real nginx (test/servers/),
// through the real CLI in temp workspaces: a second workspace restores everything a first one
// built; corrupt objects and poisoned, unsigned or foreign action entries are refused, counted and
// rebuilt; a server that dies or hangs mid-build costs one warning, never the build; the auth
// header never reaches a log, the manifest or the state directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { generateSigningKey, parsePrivateKey, Signer } from '../../packages/engine/src/cache/remote/signing.ts';
import { needServer, startNginx } from '../helpers/cache-servers.ts';
import {
  CI_KEY,
  READER_ENV,
  TARGETS,
  TOKEN,
  WRITER_ENV,
  filesContaining,
  keysOf,
  remoteRig,
} from '../helpers/remote-cache-rig.ts';

type Ev = Record<string, unknown>;
const warnings = (events: Ev[]): string[] => events.filter((e) => e.event === 'warning').map((e) => String(e.message));
const remoteStats = (events: Ev[]): Record<string, unknown> =>
  (events.find((e) => e.event === 'remote') as { stats: Record<string, unknown> }).stats;

test('a second workspace restores every target from the remote cache, verified, and runs no rule', (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const first = remoteRig({ url: srv.url, mode: 'readwrite' });
  const second = remoteRig({ url: srv.url });
  try {
    const w = first.run(['--json'], WRITER_ENV);
    assert.equal(w.code, 0, w.stdout + w.stderr);
    assert.deepEqual(first.runs(), TARGETS);
    const up = remoteStats(w.events) as { uploaded: { entries: number; objects: number } };
    assert.equal(up.uploaded.entries, TARGETS.length);
    assert.deepEqual(warnings(w.events), []);
    assert.equal(fs.readdirSync(path.join(srv.store, 'ac')).length, TARGETS.length);

    const r = second.run([], READER_ENV);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(second.runs(), [], 'no rule ran in the second workspace');
    assert.match(r.stdout, new RegExp(`rc1-build: ok · 0 ran, ${TARGETS.length} restored, 0 up to date`));
    assert.match(
      r.stdout,
      new RegExp(
        `remote   ${srv.url.replace(/[.]/g, '\\.')} \\(read\\): ${TARGETS.length} restored \\(\\d+ objects, [\\d.]+ MiB\\), 0 missed, 0 refused`,
      ),
    );
    for (const f of [
      'out/a.txt',
      'out/b.txt',
      'reports/g.json',
      'out/after_gate.txt',
      'out/c.txt',
      'out/sq.txt',
      'out/after_sq.txt',
      'out/tree/sub/one.txt',
      'out/tree/two.bin',
    ]) {
      assert.ok(second.read(f) === first.read(f), `${f} restored with the same bytes`);
    }
    assert.equal(fs.readlinkSync(path.join(second.dir, 'out/tree/latest')), 'sub/one.txt');
    const m = JSON.parse(second.read('reports/build/manifest.json')) as {
      targets: Record<string, { how: string; builtBy?: { key: string; name: string } }>;
    };
    for (const n of TARGETS)
      assert.deepEqual(m.targets[n]!.builtBy, { key: CI_KEY.keyId, name: 'ci' }, `${n}: the manifest names the signer`);
    assert.equal(m.targets.a!.how, 'restored');
    // The restored workspace is consistent: a rebuild is a no-op, audit finds nothing wrong.
    const again = second.run([], READER_ENV);
    assert.match(again.stdout, new RegExp(`0 ran, 0 restored, ${TARGETS.length} up to date`));
    const audit = second.run(['audit'], READER_ENV);
    assert.equal(audit.code, 0, audit.stdout + audit.stderr);
    // The auth header's value appears nowhere: output, manifest, state, logs of either workspace.
    for (const out of [w.stdout, w.stderr, r.stdout, r.stderr]) assert.ok(!out.includes('rc1-test-token'));
    assert.deepEqual(filesContaining(first.dir, 'rc1-test-token'), []);
    assert.deepEqual(filesContaining(second.dir, 'rc1-test-token'), []);
  } finally {
    first.cleanup();
    second.cleanup();
    srv.stop();
  }
});

test("outputs the writer's cache carries inline reach the server as objects, under an action entry without them; a reader restores them", (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const first = remoteRig({ url: srv.url, mode: 'readwrite' });
  const second = remoteRig({ url: srv.url });
  try {
    assert.equal(first.run([], WRITER_ENV).code, 0);
    const small = ['out/a.txt', 'out/c.txt', 'out/sq.txt'];
    const objectFile = (dir: string, sha: string): string => path.join(dir, '.rc1/cache/objects', sha.slice(0, 2), sha);
    for (const f of small) {
      const body = fs.readFileSync(path.join(first.dir, f));
      const sha = createHash('sha256').update(body).digest('hex');
      assert.ok(!fs.existsSync(objectFile(first.dir, sha)), `${f}: inline in the writer's cache, no object`);
      assert.deepEqual(fs.readFileSync(path.join(srv.store, 'cas', sha)), body, `${f}: an object on the server`);
    }
    for (const name of fs.readdirSync(path.join(srv.store, 'ac')))
      assert.ok(!fs.readFileSync(path.join(srv.store, 'ac', name), 'utf8').includes('inline'), 'objects only');

    const r = second.run([], READER_ENV);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(second.runs(), [], 'no rule ran in the second workspace');
    for (const f of small) {
      assert.equal(second.read(f), first.read(f), `${f} restored with the same bytes`);
      const sha = createHash('sha256').update(second.read(f)).digest('hex');
      assert.ok(fs.existsSync(objectFile(second.dir, sha)), `${f}: downloaded as an object`);
    }
    // The downloaded entries restore locally too (edit, build, revert: no rule runs, no request needed).
    second.write('src/c.txt', 'cee two\n');
    assert.equal(second.run(['c'], { ...READER_ENV, RC1_CACHE_TOKEN: 'wrong' }).code, 0);
    second.runs();
    second.write('src/c.txt', 'cee\n');
    const back = second.run(['c'], READER_ENV);
    assert.equal(back.code, 0, back.stdout + back.stderr);
    assert.deepEqual(second.runs(), []);
    assert.equal(second.read('out/c.txt'), first.read('out/c.txt'));
  } finally {
    first.cleanup();
    second.cleanup();
    srv.stop();
  }
});

test('a corrupted object on the server is refused with its digest, the target is rebuilt, counted, and the server healed', (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const first = remoteRig({ url: srv.url, mode: 'readwrite' });
  const second = remoteRig({ url: srv.url, mode: 'readwrite' });
  try {
    assert.equal(first.run([], WRITER_ENV).code, 0);
    first.runs();
    const sha = createHash('sha256').update(first.read('out/c.txt')).digest('hex');
    const blob = path.join(srv.store, 'cas', sha);
    fs.writeFileSync(blob, 'not what was built\n');
    const r = second.run(['--json'], WRITER_ENV);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(second.runs(), ['c'], 'only the target whose object was corrupt ran');
    const ws = warnings(r.events);
    assert.equal(ws.length, 1, ws.join('\n'));
    assert.match(
      ws[0]!,
      new RegExp(
        `^remote cache refused the entry for c \\(fingerprint [0-9a-f]{12}…\\): corrupt download: object ${sha.slice(0, 12)}… arrived with sha256 [0-9a-f]{12}… \\(19 bytes\\); building it here$`,
      ),
    );
    const stats = remoteStats(r.events) as { refused: number; hits: number; refusals: string[] };
    assert.equal(stats.refused, 1);
    assert.equal(stats.hits, TARGETS.length - 1);
    assert.equal(second.read('out/c.txt'), first.read('out/c.txt'));
    assert.equal(
      createHash('sha256').update(fs.readFileSync(blob)).digest('hex'),
      sha,
      'the rebuilt object replaced the corrupt one on the server',
    );
    // the console summary shows the count
    const third = remoteRig({ url: srv.url });
    try {
      fs.writeFileSync(blob, 'corrupt again\n');
      const c = third.run([], READER_ENV);
      assert.match(c.stdout, /warning: remote cache refused the entry for c /);
      assert.match(c.stdout, /, 1 refused\n/);
    } finally {
      third.cleanup();
    }
  } finally {
    first.cleanup();
    second.cleanup();
    srv.stop();
  }
});

test('poisoned action entries (altered digests, unsigned, signed by an unknown key, under another key) are refused with a clear message', (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const first = remoteRig({ url: srv.url, mode: 'readwrite' });
  const second = remoteRig({ url: srv.url });
  try {
    assert.equal(first.run([], WRITER_ENV).code, 0);
    first.runs();
    const keys = keysOf(first);
    const acFile = (n: string): string => path.join(srv.store, 'ac', keys[n]!);
    const doc = (
      n: string,
    ): { entry: Record<string, unknown> & { outputs: { sha256: string }[] }; signer: string; signature: string } =>
      JSON.parse(fs.readFileSync(acFile(n), 'utf8'));
    // a: the digest of its output replaced by that of another blob, signature kept
    const a = doc('a');
    a.entry.outputs[0]!.sha256 = createHash('sha256').update(first.read('out/c.txt')).digest('hex');
    fs.writeFileSync(acFile('a'), JSON.stringify(a));
    // c: no signature
    const c = doc('c');
    fs.writeFileSync(acFile('c'), JSON.stringify({ format: 1, entry: c.entry }));
    // sq: re-signed by a key nobody trusts
    const stranger = generateSigningKey();
    fs.writeFileSync(
      acFile('sq'),
      JSON.stringify(new Signer(parsePrivateKey(stranger.privateKey)).sign(doc('sq').entry as never)),
    );
    // tree: a trusted, validly signed entry of another target (a) served under tree's key
    fs.writeFileSync(acFile('tree'), fs.readFileSync(path.join(srv.store, 'ac', keys.b!)));
    const r = second.run(['--json'], READER_ENV);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(second.runs(), ['a', 'c', 'sq', 'tree']);
    const ws = warnings(r.events).sort();
    assert.equal(ws.length, 4, ws.join('\n'));
    assert.match(
      ws[0]!,
      /^remote cache refused the entry for a \(fingerprint [0-9a-f]{12}…\): bad signature \(claims signer ci, ed25519:[0-9a-f]{16}; the entry was altered or signed with another key\); building it here$/,
    );
    assert.match(
      ws[1]!,
      /^remote cache refused the entry for c \(.*\): unsigned \(no signer or signature\); building it here$/,
    );
    assert.match(
      ws[2]!,
      new RegExp(
        `^remote cache refused the entry for sq \\(.*\\): signed by ${stranger.keyId}, which is not in remoteCache.trustedKeys; building it here$`,
      ),
    );
    assert.match(
      ws[3]!,
      /^remote cache refused the entry for tree \(fingerprint ([0-9a-f]{12})…\): signed for fingerprint [0-9a-f]{12}…, served under \1…; building it here$/,
    );
    const stats = remoteStats(r.events) as { refused: number; hits: number };
    assert.equal(stats.refused, 4);
    assert.equal(stats.hits, TARGETS.length - 4);
    assert.equal(second.read('out/a.txt'), first.read('out/a.txt'), 'the refused target was built here, correctly');
  } finally {
    first.cleanup();
    second.cleanup();
    srv.stop();
  }
});

/** A rule that stops the cache server (its pids in RC1_TEST_SERVER_PIDS) and waits until it is gone. */
const KILL_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
export default defineRule({
  name: 'kill_server', version: 1,
  async run(ctx) {
    if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    const pid = Number(process.env.RC1_TEST_SERVER_PID);
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 200; i++) { try { process.kill(pid, 0); } catch { break; } await new Promise((r) => setTimeout(r, 25)); }
    fs.writeFileSync(ctx.output('out/killed.txt'), 'killed ' + ctx.inputs('src').length + '\\n');
  },
});
`;
const KILL_TARGETS = `    defineTarget({ name: 'killer', rule: 'rules/kill.ts', inputs: { src: target('a') }, outputs: ['out/killed.txt'] }),
    defineTarget({ name: 'after_kill', rule: 'rules/copy.ts', inputs: { src: target('killer') }, outputs: ['out/after_kill.txt'], params: ['copy.suffix'] }),
`;

test('a server killed mid-build costs one warning; the build succeeds locally', (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const rig = remoteRig(
    { url: srv.url, mode: 'readwrite', extraTargets: KILL_TARGETS },
    { 'rules/kill.ts': KILL_RULE },
  );
  try {
    const r = rig.run(['--json', '-j', '1', 'after_kill', 'after_gate', 'c', 'after_sq', 'tree'], {
      ...WRITER_ENV,
      RC1_TEST_SERVER_PID: String(srv.pid),
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(rig.runs(), [...TARGETS, 'after_kill', 'killer'].sort());
    const ws = warnings(r.events);
    assert.equal(ws.length, 1, ws.join('\n'));
    assert.match(
      ws[0]!,
      new RegExp(
        `^remote cache ${srv.url.replace(/[.]/g, '\\.')} is unavailable \\((connect ECONNREFUSED|socket hang up|(read|write) ECONNRESET|write EPIPE|connection closed by the server).*\\); continuing with the local cache only for the rest of this build$`,
      ),
    );
    const stats = remoteStats(r.events) as { unavailable?: string; uploaded: { entries: number } };
    // The same causes the warning may name (a kill that lands mid-response closes the connection).
    assert.match(
      stats.unavailable ?? '',
      /ECONNREFUSED|socket hang up|ECONNRESET|EPIPE|connection closed by the server/,
    );
    assert.ok(
      stats.uploaded.entries >= 1 && stats.uploaded.entries < TARGETS.length + 2,
      `uploads before the kill: ${stats.uploaded.entries}`,
    );
    assert.equal(rig.read('out/after_kill.txt'), 'killed 1\n!');
    // With the server still down, a build that needs it again also only warns.
    rig.write('src/c.txt', 'changed\n');
    const again = rig.run([], WRITER_ENV);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal(again.stdout.match(/^warning: /gm)?.length, 1, again.stdout);
    assert.deepEqual(rig.runs(), ['c', 'tree']);
  } finally {
    rig.cleanup();
    srv.stop();
  }
});

test('a server that stops answering is given up after timeoutMs, with one warning', (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const rig = remoteRig({ url: srv.url, mode: 'readwrite', timeoutMs: 800 });
  const stopped = [srv.pid, ...srv.workers()];
  try {
    for (const p of stopped) process.kill(p, 'SIGSTOP');
    const t0 = performance.now();
    const r = rig.run(['--json'], WRITER_ENV);
    const ms = performance.now() - t0;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(rig.runs(), TARGETS);
    const ws = warnings(r.events);
    assert.equal(ws.length, 1, ws.join('\n'));
    assert.match(ws[0]!, /is unavailable \(no answer within 800 ms\); continuing with the local cache only/);
    assert.ok(ms < 20_000, `the build took ${Math.round(ms)} ms`);
  } finally {
    for (const p of stopped) {
      try {
        process.kill(p, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
    rig.cleanup();
    srv.stop();
  }
});

test('a wrong or missing auth token costs one warning naming the setting, never the build or the token', (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const rig = remoteRig({ url: srv.url, mode: 'readwrite' });
  try {
    const wrong = rig.run([], { ...WRITER_ENV, RC1_CACHE_TOKEN: 'Bearer wrong-token-value' });
    assert.equal(wrong.code, 0, wrong.stdout + wrong.stderr);
    const ws = wrong.stdout.match(/^warning: .*$/gm) ?? [];
    assert.equal(ws.length, 1, wrong.stdout);
    assert.match(
      ws[0]!,
      /^warning: remote cache http:\/\/127\.0\.0\.1:\d+ is unavailable \(GET \/ac\/[0-9a-f]{12}… answered HTTP 401 Unauthorized \(check remoteCache\.authHeader and its environment variable\)\); continuing with the local cache only for the rest of this build$/,
    );
    assert.ok(!wrong.stdout.includes('wrong-token-value') && !wrong.stderr.includes('wrong-token-value'));
    rig.write('src/c.txt', 'changed\n');
    const missing = rig.run([], { RC1_CACHE_SIGNING_KEY: WRITER_ENV.RC1_CACHE_SIGNING_KEY });
    assert.equal(missing.code, 0, missing.stdout + missing.stderr);
    assert.deepEqual(missing.stdout.match(/^warning: .*$/gm), [
      `warning: remote cache ${srv.url} is unavailable (RC1_CACHE_TOKEN is not set (it holds the Authorization header, remoteCache.authHeader)); continuing with the local cache only for the rest of this build`,
    ]);
  } finally {
    rig.cleanup();
    srv.stop();
  }
});

test('--remote-cache=off never contacts the server; readwrite without a signing key downloads only, with one warning', (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const rig = remoteRig({ url: srv.url, mode: 'readwrite' });
  try {
    const off = rig.run(['--json', '--remote-cache=off'], WRITER_ENV);
    assert.equal(off.code, 0, off.stdout + off.stderr);
    assert.equal(off.events.filter((e) => e.event === 'remote').length, 0);
    assert.equal(fs.existsSync(path.join(srv.store, 'ac')), false, 'nothing was uploaded');
    rig.write('src/c.txt', 'changed\n');
    const nokey = rig.run([], READER_ENV);
    assert.equal(nokey.code, 0);
    assert.deepEqual(nokey.stdout.match(/^warning: .*$/gm), [
      `warning: remote cache ${srv.url}: RC1_CACHE_SIGNING_KEY is not set, so nothing is uploaded (uploads are signed with that key); downloading only`,
    ]);
    assert.match(nokey.stdout, /\(read\): 0 restored \(0 objects, 0 B\), 2 missed, 0 refused/);
    const bad = rig.run(['--remote-cache=sometimes'], READER_ENV);
    assert.equal(bad.code, 64);
    assert.match(bad.stderr, /--remote-cache expects off, read or readwrite, got "sometimes"/);
  } finally {
    rig.cleanup();
    srv.stop();
  }
});

test('a target check-determinism found non-deterministic is built but not uploaded, with its reason', (t) => {
  if (!needServer(t, 'nginx', 'nginx')) return;
  const srv = startNginx({ authHeader: TOKEN });
  const stampRule = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
export default defineRule({ name: 'stamp', version: 1, run(ctx) { fs.writeFileSync(ctx.output('out/stamp.txt'), randomBytes(8).toString('hex') + '\\n'); } });
`;
  const rig = remoteRig(
    {
      url: srv.url,
      mode: 'readwrite',
      extraTargets: "    defineTarget({ name: 'stamp', rule: 'rules/stamp.ts', outputs: ['out/stamp.txt'] }),\n",
    },
    { 'rules/stamp.ts': stampRule },
  );
  try {
    const check = rig.run(['check-determinism', 'stamp', 'c'], WRITER_ENV);
    assert.equal(check.code, 1, check.stdout + check.stderr);
    const r = rig.run(['--json', 'stamp', 'c'], WRITER_ENV);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const ws = warnings(r.events);
    assert.equal(ws.length, 1, ws.join('\n'));
    assert.match(
      ws[0]!,
      /^stamp: not uploaded: check-determinism found two builds differ in out\/stamp\.txt at byte \d+ /,
    );
    const stats = remoteStats(r.events) as { notUploaded: string[]; uploaded: { entries: number } };
    assert.deepEqual(stats.notUploaded, ['stamp']);
    assert.equal(stats.uploaded.entries, 1);
    assert.deepEqual(fs.readdirSync(path.join(srv.store, 'ac')), [keysOf(rig).c]);
  } finally {
    rig.cleanup();
    srv.stop();
  }
});
