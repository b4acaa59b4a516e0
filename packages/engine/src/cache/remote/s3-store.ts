// The remote cache in an S3 bucket (AWS S3, or an S3-compatible server such as Ceph RGW):
// objects <prefix>cas/<sha256> and <prefix>ac/<key>, the same namespaces as the Bazel HTTP
// cache. Every write is conditional (If-None-Match: *), so concurrent writers never replace
// each other's objects: the first one stays, the others get 412 and count it as 'exists'. Only
// an object this machine found corrupt is written unconditionally (replace). Credentials come
// from the AWS SDK's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an
// instance role …). The SDK is loaded only when an s3:// cache is used.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { type BlobStore, type Body, type Namespace, StoreError } from './store.ts';

export interface S3StoreOptions {
  /** s3://bucket/optional/prefix */
  url: string;
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  requestChecksumCalculation?: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED';
  timeoutMs: number;
  maxSockets: number;
}

type Sdk = typeof import('@aws-sdk/client-s3');

const STREAM_ABOVE = 64 * 1024 * 1024;
/** The SDK's own messages (a retry note on stderr) stay out of the build's output: failures reach the build as errors. */
const QUIET = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function statusOf(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** An SDK error as one line: the S3 error code and HTTP status, or the network error. */
function describeError(op: string, key: string, e: unknown): StoreError | Error {
  const status = statusOf(e);
  const name = (e as Error).name;
  if (status)
    return new StoreError(
      `${op} ${key.slice(0, 20)}… answered HTTP ${status} ${name}${status === 403 ? ' (check the AWS credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE)' : ''}`,
    );
  return e instanceof Error ? e : new Error(String(e));
}

export class S3Store implements BlobStore {
  readonly describe: string;
  private readonly bucket: string;
  private readonly prefix: string;
  private client: S3Client | null = null;
  private sdk: Sdk | null = null;
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly o: S3StoreOptions) {
    const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(o.url);
    if (!m) throw new Error(`not an s3:// URL: ${o.url}`);
    this.bucket = m[1]!;
    this.prefix = m[2] ? (m[2].endsWith('/') ? m[2] : `${m[2]}/`) : '';
    this.describe =
      `s3://${this.bucket}/${this.prefix}`.replace(/\/$/, '') + (o.endpoint ? ` at ${new URL(o.endpoint).origin}` : '');
    this.agents = {
      http: new http.Agent({ keepAlive: true, maxSockets: o.maxSockets }),
      https: new https.Agent({ keepAlive: true, maxSockets: o.maxSockets }),
    };
  }

  private async open(): Promise<{ client: S3Client; sdk: Sdk }> {
    if (!this.client || !this.sdk) {
      // The SDK warns on Node 20 that its versions after January 2027 need Node 22; the engine pins
      // an exact version (packages/engine/package.json), so the warning is not actionable here.
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
      this.sdk = await import('@aws-sdk/client-s3');
      this.client = new this.sdk.S3Client({
        region: this.o.region ?? 'us-east-1',
        ...(this.o.endpoint ? { endpoint: this.o.endpoint } : {}),
        forcePathStyle: this.o.forcePathStyle ?? Boolean(this.o.endpoint),
        requestChecksumCalculation: this.o.requestChecksumCalculation ?? 'WHEN_SUPPORTED',
        maxAttempts: 2,
        logger: QUIET,
        requestHandler: {
          connectionTimeout: this.o.timeoutMs,
          requestTimeout: this.o.timeoutMs,
          httpAgent: this.agents.http,
          httpsAgent: this.agents.https,
        },
      });
    }
    return { client: this.client, sdk: this.sdk };
  }

  private key(ns: Namespace, key: string): string {
    return `${this.prefix}${ns}/${key}`;
  }

  async download(ns: Namespace, key: string, dest: string): Promise<{ sha256: string; size: number } | null> {
    const { client, sdk } = await this.open();
    let res: import('@aws-sdk/client-s3').GetObjectCommandOutput;
    try {
      res = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.key(ns, key) }));
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw describeError('GET', this.key(ns, key), e);
    }
    const h = createHash('sha256');
    let size = 0;
    await pipeline(
      res.Body as Readable,
      async function* (src: AsyncIterable<Buffer>) {
        for await (const chunk of src) {
          h.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      },
      fs.createWriteStream(dest, { flags: 'wx' }),
    );
    return { sha256: h.digest('hex'), size };
  }

  async getBytes(ns: Namespace, key: string): Promise<Buffer | null> {
    const { client, sdk } = await this.open();
    try {
      const res = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.key(ns, key) }));
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw describeError('GET', this.key(ns, key), e);
    }
  }

  async has(ns: Namespace, key: string): Promise<boolean> {
    const { client, sdk } = await this.open();
    try {
      await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.key(ns, key) }));
      return true;
    } catch (e) {
      if (statusOf(e) === 404) return false;
      throw describeError('HEAD', this.key(ns, key), e);
    }
  }

  async upload(ns: Namespace, key: string, body: Body, opts: { replace?: boolean } = {}): Promise<'stored' | 'exists'> {
    const { client, sdk } = await this.open();
    // Objects up to 64 MiB go as one buffer; bigger ones stream. A streamed body with the SDK's
    // default checksums is sent aws-chunked with a trailer, which Ceph RGW 16 refuses (411):
    // there, set requestChecksumCalculation: 'WHEN_REQUIRED'.
    const data = Buffer.isBuffer(body)
      ? body
      : body.size <= STREAM_ABOVE
        ? fs.readFileSync(body.file)
        : fs.createReadStream(body.file);
    try {
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key(ns, key),
          Body: data,
          ContentLength: Buffer.isBuffer(body) ? body.length : body.size,
          ContentType: ns === 'ac' ? 'application/json' : 'application/octet-stream',
          ...(opts.replace ? {} : { IfNoneMatch: '*' }),
        }),
      );
      return 'stored';
    } catch (e) {
      // 412: an object is there already; 409: another conditional write of it is in progress.
      if (statusOf(e) === 412 || statusOf(e) === 409) return 'exists';
      throw describeError('PUT', this.key(ns, key), e);
    }
  }

  async close(): Promise<void> {
    this.client?.destroy();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
