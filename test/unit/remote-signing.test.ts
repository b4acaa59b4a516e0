// Signed action entries (packages/engine/src/cache/remote/signing.ts): what a reader accepts and
// the reason it gives for everything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import {
  type TrustedKey,
  Signer,
  generateSigningKey,
  keyIdOf,
  parsePrivateKey,
  parsePublicKey,
  verifyEnvelope,
} from '../../packages/engine/src/cache/remote/signing.ts';

const KEY = 'a'.repeat(64);
const entry = {
  target: 't',
  key: KEY,
  outputs: [{ path: 'out/t.txt', sha256: 'b'.repeat(64), size: 3, dir: false }],
  result: 'ok',
};

function trust(...keys: ReturnType<typeof generateSigningKey>[]): Map<string, TrustedKey> {
  return new Map(
    keys.map((k, i) => {
      const key = parsePublicKey(k.publicKey);
      return [keyIdOf(key), { name: `k${i}`, id: keyIdOf(key), key }];
    }),
  );
}

test('an entry signed by a trusted key verifies, whatever the order of its fields', () => {
  const k = generateSigningKey();
  const env = new Signer(parsePrivateKey(k.privateKey)).sign(entry);
  assert.equal(env.signer, k.keyId);
  const reordered = {
    signature: env.signature,
    signer: env.signer,
    entry: { result: 'ok', outputs: entry.outputs, key: KEY, target: 't' },
    format: 1,
  };
  const v = verifyEnvelope(Buffer.from(JSON.stringify(reordered)), KEY, trust(k));
  assert.equal(v.ok, true);
  assert.equal(v.ok && v.signer.name, 'k0');
});

test('a reader refuses an altered, unsigned, foreign, misplaced or malformed entry, saying why', () => {
  const k = generateSigningKey();
  const other = generateSigningKey();
  const signer = new Signer(parsePrivateKey(k.privateKey));
  const t = trust(k);
  const why = (doc: unknown, key = KEY): string => {
    const v = verifyEnvelope(Buffer.from(typeof doc === 'string' ? doc : JSON.stringify(doc)), key, t);
    assert.equal(v.ok, false);
    return v.ok ? '' : v.why;
  };
  const good = signer.sign(entry);
  assert.match(
    why({ ...good, entry: { ...entry, result: 'gate-failed' } }),
    /^bad signature \(claims signer k0, ed25519:[0-9a-f]{16}; /,
  );
  assert.equal(why({ format: 1, entry }), 'unsigned (no signer or signature)');
  assert.equal(
    why(new Signer(parsePrivateKey(other.privateKey)).sign(entry)),
    `signed by ${other.keyId}, which is not in remoteCache.trustedKeys`,
  );
  assert.match(why(good, 'c'.repeat(64)), /^signed for fingerprint aaaaaaaaaaaa…, served under cccccccccccc…$/);
  assert.equal(why('{"format":1,'), 'not a JSON action entry');
  assert.equal(why({ format: 2, entry }), 'not an rc1-build action entry (format 1)');
  assert.match(why({ ...good, signature: 'AAAA' }), /^bad signature/);
});

test('keys are read as one line of base64 or as PEM, and a wrong key is a clear error', () => {
  const k = generateSigningKey();
  const pem = createPublicKey(parsePrivateKey(k.privateKey)).export({ type: 'spki', format: 'pem' }).toString();
  assert.equal(keyIdOf(parsePublicKey(pem)), k.keyId);
  assert.equal(keyIdOf(parsePublicKey(` ${k.publicKey}\n`)), k.keyId);
  assert.throws(
    () => parsePublicKey('c2hvcnQ='),
    /expected the 32 bytes of an Ed25519 public key in base64 \(44 characters\), got 5 bytes/,
  );
  assert.throws(() => parsePrivateKey('bm90IGEga2V5'));
});
