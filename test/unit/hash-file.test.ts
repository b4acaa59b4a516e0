// Unit tests for packages/engine/src/hash/hash-file.ts: known SHA-256 vectors, and agreement with `sha256sum`
// at every size around each buffer size the hasher might use (64 KiB, 256 KiB, 1 MiB).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashFileSync, hashFileWithStatSync, sha256Hex } from '../../packages/engine/src/hash/hash-file.ts';

const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
const MILLION_A = 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0';

function hasSha256sum(): boolean {
  try {
    execFileSync('sha256sum', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function sha256sum(path: string): string {
  return execFileSync('sha256sum', ['-b', path], { encoding: 'utf8' }).split(' ')[0]!;
}

/** Deterministic, non-repeating-per-block bytes, so a dropped or repeated chunk changes the hash. */
function patternBytes(size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  let x = 0x9e3779b9;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

describe('hashFileSync', () => {
  let dir = '';
  const write = (name: string, data: string | Uint8Array): string => {
    const p = join(dir, name);
    writeFileSync(p, data);
    return p;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rc1-hash-file-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('an empty file hashes to the empty-input vector', () => {
    assert.equal(hashFileSync(write('empty', '')), EMPTY);
  });

  test('"abc" hashes to the FIPS 180-2 vector', () => {
    assert.equal(hashFileSync(write('abc', 'abc')), ABC);
  });

  test('one million "a" (larger than the read buffer, not a multiple of it) hashes to the FIPS vector', () => {
    assert.equal(hashFileSync(write('million-a', 'a'.repeat(1_000_000))), MILLION_A);
  });

  const sizes: number[] = [];
  for (const buffer of [64 * 1024, 256 * 1024, 1024 * 1024]) {
    sizes.push(buffer - 1, buffer, buffer + 1, 2 * buffer, 3 * buffer + 12345);
  }
  for (const size of sizes) {
    test(`a file of ${size} bytes matches sha256sum`, {
      skip: hasSha256sum() ? false : 'sha256sum not installed',
    }, () => {
      const data = patternBytes(size);
      const p = write(`pattern-${size}`, data);
      const got = hashFileSync(p);
      assert.equal(got, sha256sum(p));
      assert.equal(got, createHash('sha256').update(data).digest('hex'));
    });
  }

  test('hashing twice in a row gives the same digest (the shared buffer carries nothing over)', () => {
    const big = write('big-then-small-1', patternBytes(700_000));
    const small = write('big-then-small-2', 'abc');
    const first = hashFileSync(big);
    assert.equal(hashFileSync(small), ABC);
    assert.equal(hashFileSync(big), first);
    assert.equal(hashFileSync(write('empty-2', '')), EMPTY);
  });

  test('a missing file throws ENOENT', () => {
    assert.throws(() => hashFileSync(join(dir, 'no-such-file')), { code: 'ENOENT' });
  });

  test('a directory throws EISDIR', () => {
    const d = join(dir, 'a-directory');
    mkdirSync(d);
    assert.throws(() => hashFileSync(d), { code: 'EISDIR' });
  });
});

describe('hashFileWithStatSync', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rc1-hash-file-stat-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('returns the digest, the bytes hashed and the bigint stat of the same file', () => {
    const data = patternBytes(300_000);
    const p = join(dir, 'f');
    writeFileSync(p, data);
    const r = hashFileWithStatSync(p);
    const s = statSync(p, { bigint: true });
    assert.equal(r.sha256, createHash('sha256').update(data).digest('hex'));
    assert.equal(r.size, 300_000);
    assert.equal(r.stat.size, 300_000n);
    assert.equal(r.stat.ino, s.ino);
    assert.equal(r.stat.mtimeNs, s.mtimeNs);
  });

  test('an empty file has size 0 and the empty-input digest', () => {
    const p = join(dir, 'empty');
    writeFileSync(p, '');
    const r = hashFileWithStatSync(p);
    assert.deepEqual([r.sha256, r.size, r.stat.size], [EMPTY, 0, 0n]);
  });
});

describe('sha256Hex', () => {
  test('hashes a string as UTF-8', () => {
    assert.equal(sha256Hex('abc'), ABC);
    assert.equal(sha256Hex('é'), createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'));
  });

  test('hashes a Uint8Array and an empty input', () => {
    assert.equal(sha256Hex(new Uint8Array([0x61, 0x62, 0x63])), ABC);
    assert.equal(sha256Hex(''), EMPTY);
    assert.equal(sha256Hex(new Uint8Array(0)), EMPTY);
  });
});
