import {
  DeleteObjectCommand,
  GetObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Readable } from 'node:stream';
import { S3Config } from '../../config/app-config';
import { ObjectMissing, ObjectStorage } from './object-storage';

/** S3's smallest part size. */
const PART_BYTES = 5 * 1024 * 1024;

/** Any S3-compatible bucket (AWS, MinIO, R2, …) through the AWS SDK; bodies stream both ways. */
export class S3Storage implements ObjectStorage {
  readonly driver = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly config: S3Config) {
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials:
        config.accessKeyId && config.secretAccessKey
          ? {
              accessKeyId: config.accessKeyId,
              secretAccessKey: config.secretAccessKey,
            }
          : undefined,
      // Checksums only where S3 requires them: S3-compatible servers do not all speak the newer trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      // Without these the SDK waits forever on an endpoint that accepts and never answers.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
      // The SDK would print to the console; failures reach the caller, which logs them with the request id.
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: () => undefined,
      },
    });
  }

  /**
   * lib-storage's Upload: one PutObject for a body under one part, else a multipart upload of 5 MiB parts
   * sent one at a time (at most one part is buffered in memory), aborted when anything fails.
   */
  async put(key: string, body: Readable, contentType: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.config.bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
      },
      partSize: PART_BYTES,
      queueSize: 1,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  /**
   * Multipart uploads of a crashed process are not listed here: a bucket lifecycle rule
   * (AbortIncompleteMultipartUpload) removes them, see the README.
   */
  removeAbandonedPuts(): Promise<number> {
    return Promise.resolve(0);
  }

  async read(key: string): Promise<Readable> {
    const result = await this.client
      .send(new GetObjectCommand({ Bucket: this.config.bucket, Key: key }))
      .catch((error: unknown) => {
        throw (error as { name?: string }).name === 'NoSuchKey'
          ? new ObjectMissing(key)
          : error;
      });
    if (!(result.Body instanceof Readable))
      throw new Error('S3 answered without a body stream');
    return result.Body;
  }

  /** S3 answers 204 for a key that does not exist; some compatible stores answer NoSuchKey: both mean gone. */
  async delete(key: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteObjectCommand({ Bucket: this.config.bucket, Key: key }),
      );
    } catch (error) {
      if ((error as { name?: string }).name !== 'NoSuchKey') throw error;
    }
  }

  close(): void {
    this.client.destroy();
  }
}
