// The remote tier of the output cache. The build looks a fingerprint up in the local cache
// first (rebuild/decide.ts); on a local miss it asks this tier, which fetches the signed action
// entry (/ac/<key>), checks it (trusted signer, valid signature, made for this key, the outputs
// this target declares), downloads every object it lists into the local cache (/cas/<sha256>,
// each verified by its hash on the way in) and hands back a local cache entry: the restore then
// proceeds exactly as for a local hit. After a target succeeds, the local cache's put() hands its
// entry here and the objects and the signed entry are uploaded in the background; the end of the
// build waits for them (with progress). A refused entry is reported with its reason and counted;
// a dead, slow or refusing server is reported once, and the build goes on local-only.
// The server's protocol is objects only, whatever the local cache's format: an entry whose small
// outputs the local cache carries inline (output-cache.ts) is uploaded with those outputs as cas/
// objects (their bytes verified first) and its action entry without them, so any peer, of any
// version, finds every output as an object; a downloaded entry's outputs are all objects.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildEvent } from '../../report/events.ts';
import { sha256Hex } from '../../hash/hash-file.ts';
import { tempName, treeListing, writeFileAtomic } from '../../util/fs.ts';
import { CACHE_FORMAT, type CacheEntry, type OutputCache, entryObjects } from '../output-cache.ts';
import type { BlobStore } from './store.ts';
import { type Signer, type TrustedKey, verifyEnvelope } from './signing.ts';
import { type BuiltBy, Provenance } from './provenance.ts';
import { mayUpload } from '../determinism.ts';
import type { RemoteMode, RemoteStats } from './stats.ts';

export type { RemoteMode, RemoteStats };

/** At most n promises of fn at once. */
class Limiter {
  private queue: (() => void)[] = [];
  private active = 0;
  constructor(private readonly n: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((r) => this.queue.push(r));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}

const SHA = /^[0-9a-f]{64}$/;
/** Objects at least this big are checked with HEAD before an upload; smaller ones are just PUT. */
const HEAD_FIRST_BYTES = 1 << 20;

/** Why an entry cannot be what this target's outputs are, or null. */
function shapeProblem(
  entry: Record<string, unknown>,
  outputs: readonly { path: string; dir: boolean }[],
): string | null {
  const outs = entry.outputs as CacheEntry['outputs'] | undefined;
  if (!Array.isArray(outs)) return 'no outputs list';
  if (entry.result !== 'ok' && entry.result !== 'gate-failed')
    return `result ${JSON.stringify(entry.result)} is not ok or gate-failed`;
  const want = outputs.map((o) => `${o.path}${o.dir ? '/' : ''}`).join(', ');
  const got = outs.map((o) => `${String(o?.path)}${o?.dir ? '/' : ''}`).join(', ');
  if (want !== got) return `lists outputs ${got}, the target declares ${want}`;
  for (const o of outs) {
    if (!o.dir) {
      if (typeof o.sha256 !== 'string' || !SHA.test(o.sha256))
        return `output ${o.path}: digest ${JSON.stringify(o.sha256)} is not a sha256`;
      continue;
    }
    const files = o.files ?? {};
    const links = o.links ?? {};
    for (const [rel, sha] of Object.entries(files)) {
      if (typeof sha !== 'string' || !SHA.test(sha))
        return `output ${o.path}/${rel}: digest ${JSON.stringify(sha)} is not a sha256`;
    }
    for (const rel of [...Object.keys(files), ...Object.keys(links)]) {
      if (rel === '' || path.isAbsolute(rel) || rel.split('/').some((s) => s === '..' || s === '.' || s === ''))
        return `output ${o.path}: file name ${JSON.stringify(rel)} leaves its directory`;
    }
    if (sha256Hex(treeListing(files, links)) !== o.sha256)
      return `output ${o.path}/: its listing does not hash to the digest the entry gives (wrong digests)`;
  }
  return null;
}

export class RemoteCache {
  private emit: (e: BuildEvent) => void = () => {};
  private readonly limit: Limiter;
  private readonly uploads = new Set<Promise<void>>();
  private uploadTotal = 0;
  private uploadDone = 0;
  private readonly stats: RemoteStats;
  private readonly provenance: Provenance;
  /** Objects the server sent corrupt: uploaded again (never skipped by a HEAD) once built here. */
  private readonly corruptOnServer = new Set<string>();

  constructor(
    private readonly store: BlobStore,
    private readonly local: OutputCache,
    readonly mode: RemoteMode,
    private readonly trusted: ReadonlyMap<string, TrustedKey>,
    private readonly signer: Signer | null,
    private readonly stateDir: string,
    maxInFlight: number,
    problems: { readOnlyBecause?: string; unavailable?: string } = {},
    private readonly allowNonDeterministic = false,
  ) {
    this.limit = new Limiter(maxInFlight);
    this.stats = {
      url: store.describe,
      mode,
      hits: 0,
      misses: 0,
      downloaded: { objects: 0, bytes: 0 },
      uploaded: { entries: 0, objects: 0, bytes: 0 },
      notUploaded: [],
      refused: 0,
      refusals: [],
      ...(problems.readOnlyBecause ? { readOnlyBecause: problems.readOnlyBecause } : {}),
    };
    this.startProblem = problems.unavailable;
    this.provenance = new Provenance(stateDir);
    if (mode === 'readwrite' && signer && !problems.unavailable)
      local.onPut = (entry, whole) => this.upload(entry, whole);
  }

  private readonly startProblem: string | undefined;

  /** Where warnings, upload progress and the summary go (the build's reporter). */
  attach(emit: (e: BuildEvent) => void): void {
    this.emit = emit;
    if (this.startProblem !== undefined) this.drop(new Error(this.startProblem));
    if (this.stats.readOnlyBecause)
      this.emit({ event: 'warning', message: `remote cache ${this.store.describe}: ${this.stats.readOnlyBecause}` });
  }

  get available(): boolean {
    return this.stats.unavailable === undefined;
  }

  /** The server failed: one warning, then local-only for the rest of the build. */
  private drop(e: unknown): void {
    if (this.stats.unavailable !== undefined) return;
    const why = (e as Error)?.message ?? String(e);
    this.stats.unavailable = why;
    if (this.local.onPut) this.local.onPut = undefined;
    this.emit({
      event: 'warning',
      message: `remote cache ${this.store.describe} is unavailable (${why}); continuing with the local cache only for the rest of this build`,
    });
  }

  private refuse(target: string, key: string, why: string): null {
    this.stats.refused++;
    const msg = `${target} (fingerprint ${key.slice(0, 12)}…): ${why}`;
    this.stats.refusals.push(msg);
    this.emit({ event: 'warning', message: `remote cache refused the entry for ${msg}; building it here` });
    return null;
  }

  /**
   * A local cache entry for `key`, made from the remote one (objects verified and stored in the
   * local cache), or null: a miss, a refused entry, or the server unavailable.
   */
  async lookup(
    target: string,
    key: string,
    outputs: readonly { path: string; dir: boolean }[],
  ): Promise<CacheEntry | null> {
    if (!this.available) return null;
    let bytes: Buffer | null;
    try {
      bytes = await this.limit.run(() => this.store.getBytes('ac', key));
    } catch (e) {
      this.drop(e);
      return null;
    }
    if (!bytes) {
      this.stats.misses++;
      return null;
    }
    const v = verifyEnvelope(bytes, key, this.trusted);
    if (!v.ok) return this.refuse(target, key, v.why);
    const problem = shapeProblem(v.entry, outputs);
    if (problem) return this.refuse(target, key, `signed by ${v.signer.name} (${v.signer.id}) but ${problem}`);
    // The protocol is objects only: inline bytes a peer's entry may carry are not used.
    const { inline: _inline, ...remote } = v.entry as unknown as Omit<CacheEntry, 'format'>;
    const needed = new Set<string>();
    for (const o of remote.outputs) {
      if (o.dir) for (const sha of Object.values(o.files ?? {})) needed.add(sha);
      else needed.add(o.sha256);
    }
    const missing: string[] = [];
    const corrupt: string[] = [];
    // Every download of this lookup has ended when it returns: after the first failure, the ones
    // still queued do not start (nothing lands in objects/ after the build's cap walk, nothing
    // reaches the server after its warning), and the ones in flight are waited for.
    let failed = false;
    const settled = await Promise.allSettled(
      [...needed].map((sha) =>
        this.limit.run(async () => {
          if (failed || !this.available) return;
          try {
            const obj = this.local.objectPath(sha);
            if (fs.existsSync(obj)) return;
            fs.mkdirSync(path.dirname(obj), { recursive: true });
            const tmp = tempName(obj);
            try {
              const got = await this.store.download('cas', sha, tmp);
              if (!got) {
                missing.push(sha);
                return;
              }
              if (got.sha256 !== sha) {
                this.corruptOnServer.add(sha);
                corrupt.push(
                  `object ${sha.slice(0, 12)}… arrived with sha256 ${got.sha256.slice(0, 12)}… (${got.size} bytes)`,
                );
                return;
              }
              fs.chmodSync(tmp, 0o444);
              fs.renameSync(tmp, obj);
              this.stats.downloaded.objects++;
              this.stats.downloaded.bytes += got.size;
            } finally {
              fs.rmSync(tmp, { force: true });
            }
          } catch (e) {
            failed = true;
            throw e;
          }
        }),
      ),
    );
    const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (rejected) {
      this.drop(rejected.reason);
      return null;
    }
    if (!this.available) return null;
    if (corrupt.length)
      return this.refuse(
        target,
        key,
        `corrupt download: ${corrupt.sort()[0]}${corrupt.length > 1 ? ` and ${corrupt.length - 1} more` : ''}`,
      );
    if (missing.length) {
      this.stats.misses++;
      return null;
    } // the server evicted some objects: a miss, not a poisoned entry
    const entry: CacheEntry = { ...remote, format: CACHE_FORMAT, target, key };
    writeFileAtomic(this.local.entryPath(key), JSON.stringify(entry));
    this.stats.hits++;
    this.provenance.set(key, { key: v.signer.id, name: v.signer.name });
    this.emit({
      event: 'log',
      target,
      line: `fetched from remote cache ${this.store.describe} (built by ${v.signer.name}, ${v.signer.id})`,
    });
    return entry;
  }

  /**
   * Upload a local cache entry (objects, then the signed action entry), in the background.
   * `whole`: the entry as put() wrote it (its inline bytes in it, or none to carry); else a rule
   * worker stored it and it is told without them.
   */
  private upload(entry: CacheEntry, whole: boolean): void {
    if (!this.available || !this.signer) return;
    const may = mayUpload(this.stateDir, entry.target, { allowNonDeterministic: this.allowNonDeterministic });
    if (!may.upload) {
      this.stats.notUploaded.push(entry.target);
      this.emit({ event: 'warning', message: `${entry.target}: ${may.reason}` });
      return;
    }
    const signer = this.signer;
    // Outputs carried inline: their bytes, from the entry as told (put()) or else as stored (a rule
    // worker wrote it; stored() tells the entry without them), each verified against its digest.
    // An entry put() wrote with no inline bytes is not read again: it has none to carry.
    const notUploaded = (why: string): void => {
      this.stats.notUploaded.push(entry.target);
      this.emit({ event: 'warning', message: `${entry.target}: not uploaded to the remote cache: ${why}` });
    };
    const local = whole || entry.inline ? entry : this.local.get(entry.key);
    if (!local) return notUploaded('its local cache entry is gone or unreadable');
    const inlined = local.inline ?? {};
    const objects = entryObjects({ outputs: entry.outputs, inline: inlined });
    const inline = new Map<string, Buffer>();
    for (const o of entry.outputs) {
      if (o.dir || objects.has(o.sha256) || inline.has(o.sha256)) continue;
      const bytes = Buffer.from(inlined[o.sha256]!, 'base64');
      if (sha256Hex(bytes) !== o.sha256) return notUploaded(`the local cache entry's copy of ${o.path} is corrupt`);
      inline.set(o.sha256, bytes);
    }
    this.uploadTotal++;
    const p = (async () => {
      const bodies = new Map<string, { file: string } | Buffer>();
      for (const sha of objects) bodies.set(sha, { file: this.local.objectPath(sha) });
      for (const [sha, bytes] of inline) bodies.set(sha, bytes);
      await Promise.all(
        [...bodies].map(([sha, from]) =>
          this.limit.run(async () => {
            if (!this.available) return;
            const body = Buffer.isBuffer(from) ? from : { file: from.file, size: fs.statSync(from.file).size };
            const size = Buffer.isBuffer(body) ? body.length : body.size;
            if (size >= HEAD_FIRST_BYTES && !this.corruptOnServer.has(sha) && (await this.store.has('cas', sha)))
              return;
            if ((await this.store.upload('cas', sha, body, { replace: this.corruptOnServer.has(sha) })) === 'stored') {
              this.stats.uploaded.objects++;
              this.stats.uploaded.bytes += size;
            }
          }),
        ),
      );
      if (!this.available) return;
      const { format: _f, inline: _i, ...body } = entry;
      const envelope = signer.sign(body as unknown as Parameters<Signer['sign']>[0]);
      await this.limit.run(() => this.store.upload('ac', entry.key, Buffer.from(JSON.stringify(envelope))));
      this.stats.uploaded.entries++;
      this.provenance.set(entry.key, { key: signer.keyId, name: 'this machine' });
    })()
      .catch((e: unknown) => this.drop(e))
      .finally(() => {
        this.uploadDone++;
        this.uploads.delete(p);
      });
    this.uploads.add(p);
  }

  /**
   * Wait for the uploads still in flight (progress events while it waits), save who built what,
   * report the summary. Called once, at the end of a build that was not interrupted.
   */
  async drain(): Promise<RemoteStats> {
    let last = 0;
    while (this.uploads.size) {
      const now = performance.now();
      if (now - last >= 100) {
        last = now;
        this.emit({
          event: 'progress',
          target: 'remote cache upload',
          done: this.uploadDone,
          total: this.uploadTotal,
          unit: 'entries',
        });
      }
      await Promise.race([...this.uploads, new Promise((r) => setTimeout(r, 100))]);
    }
    if (last)
      this.emit({
        event: 'progress',
        target: 'remote cache upload',
        done: this.uploadDone,
        total: this.uploadTotal,
        unit: 'entries',
      });
    this.provenance.save();
    this.emit({ event: 'remote', stats: this.stats });
    return this.stats;
  }

  async close(): Promise<void> {
    this.local.onPut = undefined;
    await this.store.close();
  }
}

export type { BuiltBy };
