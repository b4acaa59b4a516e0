// What a remote cache server offers the engine, whatever its protocol: the two namespaces of the
// Bazel HTTP cache protocol, cas/<sha256> (content, verifiable by its hash) and ac/<key> (action
// entries, verified by signature). Implemented by http-store.ts (Bazel HTTP cache: nginx WebDAV,
// bazel-remote, …) and s3-store.ts (S3 and S3-compatible servers). A miss is null; any other
// failure throws, and the caller degrades to the local cache for the rest of the build.
export type Namespace = 'cas' | 'ac';

export type Body = { file: string; size: number } | Buffer;

export interface BlobStore {
  /** The server, as it may be shown: no credentials, no auth header. */
  readonly describe: string;
  /** Stream an object into `dest` (created); its sha256 and size, or null when the server has no such object. */
  download(ns: Namespace, key: string, dest: string): Promise<{ sha256: string; size: number } | null>;
  /** A small object (an action entry) in memory, or null. */
  getBytes(ns: Namespace, key: string): Promise<Buffer | null>;
  has(ns: Namespace, key: string): Promise<boolean>;
  /**
   * Store an object; 'exists' when the server kept an earlier copy (a conditional write lost the
   * race). `replace`: overwrite whatever is there (an object found corrupt).
   */
  upload(ns: Namespace, key: string, body: Body, opts?: { replace?: boolean }): Promise<'stored' | 'exists'>;
  close(): Promise<void>;
}

/** A server answer the engine does not expect (5xx, 401, 403 …): the server is unusable for this build. */
export class StoreError extends Error {}
