// Turns definePipeline({ remoteCache }) and --remote-cache=off|read|readwrite into a RemoteCache
// (or none). Keys and the auth header come from the environment; a problem with the declared
// keys is a usage error naming the field, a missing signing key only makes the cache read-only
// (with one warning), so a teammate without the CI key still gets downloads.
import type { UserRemoteCache } from '../../api/index.ts';
import { UsageError } from '../../config/usage-error.ts';
import { PIPELINE_FILE } from '../../config/load-pipeline.ts';
import type { OutputCache } from '../output-cache.ts';
import { HttpStore } from './http-store.ts';
import { RemoteCache, type RemoteMode } from './remote-cache.ts';
import type { KeyObject } from 'node:crypto';
import { Signer, type TrustedKey, keyIdOf, parsePrivateKey, parsePublicKey } from './signing.ts';
import type { BlobStore } from './store.ts';

export class MissingAuth extends Error {}

export type RemoteFlag = 'off' | RemoteMode;

export function parseRemoteFlag(v: string | undefined): RemoteFlag | undefined {
  if (v === undefined) return undefined;
  if (v === 'off' || v === 'read' || v === 'readwrite') return v;
  throw new UsageError({ headline: `--remote-cache expects off, read or readwrite, got ${JSON.stringify(v)}` });
}

export function trustList(decl: UserRemoteCache): Map<string, TrustedKey> {
  const out = new Map<string, TrustedKey>();
  for (const [name, text] of Object.entries(decl.trustedKeys ?? {})) {
    let key: KeyObject;
    try {
      key = parsePublicKey(text);
    } catch (e) {
      throw new UsageError({
        headline: `definePipeline: remoteCache.trustedKeys.${name}: ${(e as Error).message}`,
        location: PIPELINE_FILE,
        hint: '`rc1-build cache-keygen` prints a key pair; the public key is one line of base64',
      });
    }
    const id = keyIdOf(key);
    out.set(id, { name, id, key });
  }
  return out;
}

export async function openStore(
  decl: UserRemoteCache,
  env: NodeJS.ProcessEnv,
  maxInFlight: number,
  timeoutMs: number,
): Promise<BlobStore> {
  if (decl.url.startsWith('s3://')) {
    if (decl.authHeader)
      throw new UsageError({
        headline:
          'definePipeline: remoteCache.authHeader is for http(s):// caches; an s3:// cache uses the AWS credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an instance role)',
        location: PIPELINE_FILE,
      });
    const { S3Store } = await import('./s3-store.ts');
    return new S3Store({ url: decl.url, ...(decl.s3 ?? {}), timeoutMs, maxSockets: maxInFlight });
  }
  if (decl.s3)
    throw new UsageError({
      headline: `definePipeline: remoteCache.s3 applies to s3:// URLs only, and the url is ${decl.url}`,
      location: PIPELINE_FILE,
    });
  const headers: Record<string, string> = {};
  if (decl.authHeader) {
    const v = env[decl.authHeader.env];
    if (!v)
      throw new MissingAuth(
        `${decl.authHeader.env} is not set (it holds the ${decl.authHeader.name ?? 'Authorization'} header, remoteCache.authHeader)`,
      );
    headers[(decl.authHeader.name ?? 'Authorization').toLowerCase()] = v;
  }
  return new HttpStore({ url: decl.url, headers, timeoutMs, maxSockets: maxInFlight });
}

/** The remote tier for one build, or null when there is none (not declared, or --remote-cache=off). */
export async function openRemoteCache(o: {
  decl: UserRemoteCache | undefined;
  flag: RemoteFlag | undefined;
  env: NodeJS.ProcessEnv;
  local: OutputCache;
  stateDir: string;
}): Promise<RemoteCache | null> {
  if (o.flag === 'off') return null;
  if (!o.decl) {
    if (o.flag)
      throw new UsageError({
        headline: `--remote-cache=${o.flag}: ${PIPELINE_FILE} declares no remote cache`,
        location: PIPELINE_FILE,
        hint: "add definePipeline({ remoteCache: { url: 'http://host:port/prefix', trustedKeys: {...} } }) (README: Remote cache)",
      });
    return null;
  }
  const d = o.decl;
  let mode: RemoteMode = o.flag ?? d.mode ?? 'read';
  const trusted = trustList(d);
  let signer: Signer | null = null;
  let readOnlyBecause: string | undefined;
  if (mode === 'readwrite') {
    const text = d.signingKeyEnv ? o.env[d.signingKeyEnv] : undefined;
    if (!d.signingKeyEnv)
      readOnlyBecause =
        'no remoteCache.signingKeyEnv is declared, so nothing is uploaded (uploads are signed); downloading only';
    else if (!text)
      readOnlyBecause = `${d.signingKeyEnv} is not set, so nothing is uploaded (uploads are signed with that key); downloading only`;
    else {
      try {
        signer = new Signer(parsePrivateKey(text));
      } catch (e) {
        throw new UsageError({
          headline: `remote cache: ${d.signingKeyEnv} does not hold an Ed25519 private key: ${(e as Error).message.split('\n')[0]}`,
          location: PIPELINE_FILE,
          hint: '`rc1-build cache-keygen` prints a key pair: the private key (one line of base64) goes in that variable',
        });
      }
    }
    if (!signer) mode = 'read';
  }
  const maxInFlight = d.maxInFlight ?? 16;
  let store: BlobStore;
  try {
    store = await openStore(d, o.env, maxInFlight, d.timeoutMs ?? 10_000);
  } catch (e) {
    if (!(e instanceof MissingAuth)) throw e;
    // Not a reason to fail a build: it goes on local-only, with one warning (RemoteCache.attach).
    store = new HttpStore({ url: d.url, headers: {}, timeoutMs: 1, maxSockets: 1 });
    return new RemoteCache(store, o.local, mode, trusted, signer, o.stateDir, maxInFlight, { unavailable: e.message });
  }
  return new RemoteCache(
    store,
    o.local,
    mode,
    trusted,
    signer,
    o.stateDir,
    maxInFlight,
    readOnlyBecause ? { readOnlyBecause } : {},
    d.allowNonDeterministic === true,
  );
}
