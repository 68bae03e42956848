import { Buffer } from 'node:buffer';
import { crc32 } from 'node:zlib';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { runtimeName } from '@crm/runtime';

// S3 multipart parts are at least 5 MiB (except the last).
export const PART_SIZE = 5 * 1024 * 1024;

/**
 * Whether a part is sent as a stream of views over the part buffer (no copy). Under Bun the S3
 * client sends through `fetch` (see `createS3`), which copies a `Uint8Array` body whole before
 * sending it but streams a `ReadableStream` with the given Content-Length. Deno's `fetch` drops
 * the Content-Length of a stream (chunked), which S3 refuses for a part, so Deno sends the bytes.
 */
export const STREAM_PARTS = runtimeName === 'bun';

/** Slices handed to the HTTP client: views into the part buffer, not copies. */
const SLICE_BYTES = 256 * 1024;

/**
 * Part buffers of finished uploads, kept for the next ones: 20 MiB uploads would otherwise leave
 * a dead 5 MiB buffer each until the garbage collector runs, and ten at once grew the process by
 * more than the buffers in use. At most MAX_IDLE_BUFFERS are kept (their pages stay resident).
 */
const idleBuffers: Uint8Array[] = [];
export const MAX_IDLE_BUFFERS = 10;

function takeBuffer(): Uint8Array {
  return idleBuffers.pop() ?? new Uint8Array(PART_SIZE);
}

/** Only a buffer no send may still be reading comes back (after a failed send it is left to the GC). */
function returnBuffer(buffer: Uint8Array): void {
  if (idleBuffers.length < MAX_IDLE_BUFFERS) idleBuffers.push(buffer);
}

/** How many part buffers wait for the next upload (tests and measurements). */
export const idlePartBuffers = () => idleBuffers.length;

/** The bytes as the request body: a stream of views (Bun) or the bytes themselves. */
function bodyOf(bytes: Uint8Array): ReadableStream<Uint8Array> | Uint8Array {
  if (!STREAM_PARTS) return bytes;
  let at = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (at >= bytes.byteLength) {
          controller.close();
          return;
        }
        const end = Math.min(at + SLICE_BYTES, bytes.byteLength);
        controller.enqueue(bytes.subarray(at, end));
        at = end;
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The part's CRC32 as S3 wants it (base64 of the big-endian value). Given with the request, the
 * SDK neither computes it again nor wraps a streamed body in aws-chunked encoding, and the
 * server still checks every byte it stored.
 */
function crc32Of(bytes: Uint8Array): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(bytes) >>> 0);
  return out.toString('base64');
}

/** A failure worth one more attempt: no answer at all, throttling or a server error. */
function retryable(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  return status === undefined || status === 429 || status >= 500;
}

/**
 * Sends bytes with a body made afresh per attempt: the SDK does not retry a streamed body (it
 * cannot replay it), so the one retry the client allows (`maxAttempts: 2`) is done here.
 */
async function sendBytes<T>(
  bytes: Uint8Array,
  send: (body: ReadableStream<Uint8Array> | Uint8Array, checksum: string) => Promise<T>,
): Promise<T> {
  const checksum = crc32Of(bytes);
  try {
    return await send(bodyOf(bytes), checksum);
  } catch (error) {
    if (!STREAM_PARTS || !retryable(error)) throw error;
    return await send(bodyOf(bytes), checksum);
  }
}

/**
 * Streams a body into the bucket through ONE reusable 5 MiB buffer: a body that fits is a
 * single PutObject; a larger one becomes a multipart upload with one part in flight, the
 * buffer refilled only after the part is stored. Reading is pulled, so the client is held back
 * by TCP instead of being buffered. The part goes out without being copied (see STREAM_PARTS)
 * and the buffer is reused by the next upload. A failing body (its own error) or store aborts
 * the multipart upload, so no parts are left behind, and rejects with that error.
 */
export async function uploadStream(
  s3: S3Client,
  target: { bucket: string; key: string; contentType: string },
  body: ReadableStream<Uint8Array>,
): Promise<void> {
  const { bucket, key, contentType } = target;
  const buffer = takeBuffer();
  const reader = body.getReader();
  let filled = 0;
  let uploadId: string | undefined;
  const parts: { ETag: string | undefined; PartNumber: number }[] = [];
  // Set while the HTTP client may still read the buffer; a failure then leaves the buffer to the GC.
  let sending = false;
  const send = async <T>(bytes: Uint8Array, request: (body: ReadableStream<Uint8Array> | Uint8Array, checksum: string) => Promise<T>) => {
    sending = true;
    const out = await sendBytes(bytes, request);
    sending = false;
    return out;
  };

  const storePart = async () => {
    uploadId ??= (await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }))).UploadId;
    const PartNumber = parts.length + 1;
    const out = await send(buffer.subarray(0, filled), (Body, ChecksumCRC32) =>
      s3.send(
        new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber, Body, ContentLength: filled, ChecksumCRC32 }),
      ),
    );
    parts.push({ ETag: out.ETag, PartNumber });
    filled = 0;
  };

  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let offset = 0;
      while (offset < value.byteLength) {
        const n = Math.min(PART_SIZE - filled, value.byteLength - offset);
        buffer.set(value.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled === PART_SIZE) await storePart();
      }
    }
    if (uploadId === undefined) {
      await send(buffer.subarray(0, filled), (Body, ChecksumCRC32) =>
        s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: contentType, Body, ContentLength: filled, ChecksumCRC32 })),
      );
    } else {
      if (filled > 0) await storePart();
      await s3.send(
        new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
      );
    }
    returnBuffer(buffer);
  } catch (error) {
    if (!sending) returnBuffer(buffer);
    await reader.cancel(error).catch(() => {});
    if (uploadId !== undefined)
      await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => {});
    throw error;
  }
}
