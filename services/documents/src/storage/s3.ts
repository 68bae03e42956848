import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { AppError } from '@crm/http';
import { FetchHttpHandler } from '@smithy/fetch-http-handler';
import { STREAM_PARTS, uploadStream } from './streaming-upload.ts';

export interface S3Settings {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}

const quiet = () => {};
/** The SDK's default logger says nothing, except a console warning for each failed streamed part; this one says nothing at all. */
const silentLogger = { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet };

/**
 * An S3 client for MinIO (path-style addressing). Under Bun it sends through `fetch`, which
 * streams an upload part from its buffer (`node:http` there copies a body before sending it);
 * see `STREAM_PARTS` in streaming-upload.ts.
 */
export function createS3(settings: S3Settings): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: true,
    maxAttempts: 2,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    logger: silentLogger,
    ...(STREAM_PARTS ? { requestHandler: new FetchHttpHandler({ keepAlive: true }) } : {}),
  });
}

/** Readiness: the bucket answers HEAD. */
export async function checkBucket(s3: S3Client, bucket: string): Promise<void> {
  await s3.send(new HeadBucketCommand({ Bucket: bucket }));
}

/** Creates the bucket if it is missing. */
export async function ensureBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await checkBucket(s3, bucket);
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((error) => {
      if (!/BucketAlreadyOwnedByYou|BucketAlreadyExists/.test(String(error?.name))) throw error;
    });
  }
}

function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

/** Any storage failure other than "no such object" is the storage being unavailable (503). */
function unavailable(error: unknown): AppError {
  if (error instanceof AppError) return error;
  return new AppError('service_unavailable', `Document storage is unavailable (${error instanceof Error ? error.name : 'error'})`);
}

export interface StoredObjectInfo {
  size: number;
  contentType: string | undefined;
}

/**
 * The document bucket: streaming uploads, metadata lookups, ranged reads, downloads and
 * deletes. It counts HeadObject calls per tenant (keys start with the tenant id) so the cost
 * of `include=metadata` can be observed.
 */
export function createStorage(s3: S3Client, bucket: string) {
  const headCounts = new Map<string, number>();
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'HeadObjectCommand') {
        const tenant = String((args.input as { Key?: string }).Key ?? '').split('/')[0] as string;
        headCounts.set(tenant, (headCounts.get(tenant) ?? 0) + 1);
      }
      return next(args);
    },
    { step: 'initialize', name: 'countHeadObject' },
  );

  return {
    /** Streams a body into the bucket through one 5 MiB buffer; rejects with the body's own error if it fails. */
    upload(key: string, body: ReadableStream<Uint8Array>, contentType: string): Promise<void> {
      return uploadStream(s3, { bucket, key, contentType }, body);
    },

    /** Size and content type of a stored object, or undefined when it does not exist. */
    async head(key: string): Promise<StoredObjectInfo | undefined> {
      try {
        const out = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { size: Number(out.ContentLength ?? 0), contentType: out.ContentType };
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw unavailable(error);
      }
    },

    /** Bytes `start..end` (inclusive) of an object. */
    async readRange(key: string, start: number, end: number): Promise<Uint8Array> {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end}` }));
        return (await out.Body?.transformToByteArray()) ?? new Uint8Array(0);
      } catch (error) {
        throw unavailable(error);
      }
    },

    /** The object's bytes as a stream, or undefined when it does not exist. */
    async download(key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number } | undefined> {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        if (!out.Body) return undefined;
        return { body: out.Body.transformToWebStream() as ReadableStream<Uint8Array>, size: Number(out.ContentLength ?? 0) };
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw unavailable(error);
      }
    },

    /** Deletes an object (a missing object is not an error). */
    async remove(key: string): Promise<void> {
      try {
        await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } catch (error) {
        throw unavailable(error);
      }
    },

    /** How many HeadObject calls this process made for a tenant's objects. */
    headRequestsFor(tenantId: string): number {
      return headCounts.get(tenantId) ?? 0;
    },

    /** Maps an upload failure to the HTTP error (503 unless it is already an AppError). */
    failure: unavailable,
  };
}

export type Storage = ReturnType<typeof createStorage>;
