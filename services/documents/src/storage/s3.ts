import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';

export interface S3Settings {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}

/** An S3 client for MinIO (path-style addressing). */
export function createS3(settings: S3Settings): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: true,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
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
