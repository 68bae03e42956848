import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

// S3 multipart parts are at least 5 MiB (except the last).
export const PART_SIZE = 5 * 1024 * 1024;

/**
 * Streams a body into the bucket through ONE reusable 5 MiB buffer: a body that fits is a
 * single PutObject; a larger one becomes a multipart upload with one part in flight, the
 * buffer refilled only after the part is stored. Reading is pulled, so the client is held back
 * by TCP instead of being buffered. A failing body (its own error) or store aborts the
 * multipart upload, so no parts are left behind, and rejects with that error.
 */
export async function uploadStream(
  s3: S3Client,
  target: { bucket: string; key: string; contentType: string },
  body: ReadableStream<Uint8Array>,
): Promise<void> {
  const { bucket, key, contentType } = target;
  const buffer = new Uint8Array(PART_SIZE);
  const reader = body.getReader();
  let filled = 0;
  let uploadId: string | undefined;
  const parts: { ETag: string | undefined; PartNumber: number }[] = [];

  const storePart = async () => {
    uploadId ??= (await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }))).UploadId;
    const PartNumber = parts.length + 1;
    const out = await s3.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        PartNumber,
        Body: buffer.subarray(0, filled),
        ContentLength: filled,
      }),
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
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          ContentType: contentType,
          Body: buffer.subarray(0, filled),
          ContentLength: filled,
        }),
      );
      return;
    }
    if (filled > 0) await storePart();
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    if (uploadId !== undefined)
      await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => {});
    throw error;
  }
}
