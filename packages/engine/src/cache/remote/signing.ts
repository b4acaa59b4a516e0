// Signed action entries. A remote /ac/<key> entry maps a fingerprint key to output digests; the
// server cannot check it (it is not addressed by its own hash), so its writer signs it with an
// Ed25519 key and readers accept it only when the signature verifies with a key of their trust
// list. The signed message binds the entry to its key, so an entry copied under another key is
// refused too. Keys travel as one line of base64: the private key as PKCS#8 DER (for an
// environment variable), the public key as its 32 raw bytes (for rc1.build.ts); PEM is accepted.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { canonicalJson } from '../../util/canonical-json.ts';

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const CONTEXT = 'rc1-build action entry v1\n';

export interface SignedEnvelope {
  format: 1;
  /** The entry as the writer's local cache stores it (target, key, outputs, result, checks…). */
  entry: Record<string, unknown> & { key: string };
  /** Key id of the signer (keyIdOf). */
  signer: string;
  /** Ed25519 signature, base64, over CONTEXT + canonical JSON of the entry. */
  signature: string;
}

export interface TrustedKey {
  name: string;
  id: string;
  key: KeyObject;
}

function rawPublic(key: KeyObject): Buffer {
  const der = key.export({ type: 'spki', format: 'der' });
  return der.subarray(der.length - 32);
}

/** ed25519:<first 16 hex digits of sha256 of the 32 raw public-key bytes>. */
export function keyIdOf(publicKey: KeyObject): string {
  return `ed25519:${createHash('sha256').update(rawPublic(publicKey)).digest('hex').slice(0, 16)}`;
}

export function parsePublicKey(text: string): KeyObject {
  const t = text.trim();
  if (t.startsWith('-----BEGIN')) return createPublicKey(t);
  const raw = Buffer.from(t, 'base64');
  if (raw.length !== 32)
    throw new Error(
      `expected the 32 bytes of an Ed25519 public key in base64 (44 characters), got ${raw.length} bytes`,
    );
  const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  return key;
}

export function parsePrivateKey(text: string): KeyObject {
  const t = text.trim();
  const key = t.startsWith('-----BEGIN')
    ? createPrivateKey(t)
    : createPrivateKey({ key: Buffer.from(t, 'base64'), format: 'der', type: 'pkcs8' });
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`expected an Ed25519 private key, got ${key.asymmetricKeyType ?? 'an unknown key type'}`);
  return key;
}

/** A new key pair as the one-line texts rc1.build.ts and the environment take. */
export function generateSigningKey(): { privateKey: string; publicKey: string; keyId: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
    publicKey: rawPublic(publicKey).toString('base64'),
    keyId: keyIdOf(publicKey),
  };
}

function message(entry: SignedEnvelope['entry']): Buffer {
  return Buffer.from(CONTEXT + canonicalJson(entry));
}

export class Signer {
  readonly keyId: string;
  constructor(private readonly key: KeyObject) {
    this.keyId = keyIdOf(createPublicKey(key));
  }
  sign(entry: SignedEnvelope['entry']): SignedEnvelope {
    return { format: 1, entry, signer: this.keyId, signature: sign(null, message(entry), this.key).toString('base64') };
  }
}

export type Verdict = { ok: true; entry: SignedEnvelope['entry']; signer: TrustedKey } | { ok: false; why: string };

/**
 * Check an /ac/ document fetched for `key`: well-formed, signed by a trusted key, signature valid,
 * and made for this key. Output digests are checked later, against the blobs.
 */
export function verifyEnvelope(bytes: Buffer, key: string, trusted: ReadonlyMap<string, TrustedKey>): Verdict {
  let doc: Partial<SignedEnvelope>;
  try {
    doc = JSON.parse(bytes.toString('utf8')) as Partial<SignedEnvelope>;
  } catch {
    return { ok: false, why: 'not a JSON action entry' };
  }
  if (!doc || typeof doc !== 'object' || doc.format !== 1 || !doc.entry || typeof doc.entry !== 'object')
    return { ok: false, why: 'not an rc1-build action entry (format 1)' };
  if (typeof doc.signature !== 'string' || typeof doc.signer !== 'string')
    return { ok: false, why: 'unsigned (no signer or signature)' };
  const k = trusted.get(doc.signer);
  if (!k) return { ok: false, why: `signed by ${doc.signer}, which is not in remoteCache.trustedKeys` };
  let good = false;
  try {
    good = verify(null, message(doc.entry), k.key, Buffer.from(doc.signature, 'base64'));
  } catch {
    good = false;
  }
  if (!good)
    return {
      ok: false,
      why: `bad signature (claims signer ${k.name}, ${k.id}; the entry was altered or signed with another key)`,
    };
  if (doc.entry.key !== key)
    return {
      ok: false,
      why: `signed for fingerprint ${String(doc.entry.key).slice(0, 12)}…, served under ${key.slice(0, 12)}…`,
    };
  return { ok: true, entry: doc.entry, signer: k };
}
