import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { S3Config } from '../../config/app-config';
import { ObjectStorage } from './object-storage';

/** Any S3-compatible bucket (AWS, MinIO, R2, …) through the AWS SDK; bodies stream both ways. */
export class S3Storage implements ObjectStorage {
  readonly driver = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly config: S3Config) {
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
      // Checksums only where S3 requires them: S3-compatible servers do not all speak the newer trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      // Without these the SDK waits forever on an endpoint that accepts and never answers.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
      // The SDK would print to the console; failures reach the caller, which logs them with the request id.
      logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    });
  }

  async put(key: string, body: Readable, size: number, contentType: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.config.bucket, Key: key, Body: body, ContentLength: size, ContentType: contentType }));
  }

  async read(key: string): Promise<Readable> {
    const result = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: key }));
    if (!(result.Body instanceof Readable)) throw new Error('S3 answered without a body stream');
    return result.Body;
  }

  /** S3 answers 204 for a key that does not exist; some compatible stores answer NoSuchKey: both mean gone. */
  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: key }));
    } catch (error) {
      if ((error as { name?: string }).name !== 'NoSuchKey') throw error;
    }
  }

  close(): void {
    this.client.destroy();
  }
}
