// The storage port on S3 or any S3-compatible service (MinIO, R2, s3rver in tests), selected by
// S3_BUCKET. Browsers upload and download with presigned URLs, so the bytes go straight to the bucket.
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  assertContentType,
  assertFileKey,
  assertLinkSeconds,
  assertMaxBytes,
  assertStartBytes,
  contentDisposition,
  type FileStore,
  type SignedDownloadOptions,
  type SignedUpload,
  type SignedUploadOptions,
  type StoredFile,
  type StoredFileInfo,
} from '../core/storage.ts';

export interface S3StoreOptions {
  bucket: string;
  region: string;
  /** An S3-compatible endpoint (`http://minio:9000`); AWS's own when absent. */
  endpoint?: string | undefined;
  /** Both or neither: without them the SDK's default chain (env, instance role...) applies. */
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** `bucket.host` URLs by default; path-style (`host/bucket`) for MinIO, s3rver and most others. */
  forcePathStyle: boolean;
}

/** HEAD answers a bare 404 (no error code in the body), GET a NoSuchKey: both mean "no such file". */
function isMissing(err: unknown): boolean {
  return (
    err instanceof S3ServiceException &&
    (err.name === 'NotFound' || err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404)
  );
}

export class S3FileStore implements FileStore {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      credentials: options.credentials,
      forcePathStyle: options.forcePathStyle,
      // The SDK's default adds a CRC32 of the body it signs to presigned PUTs, which no browser
      // upload of other bytes could match, and many S3-compatible services reject: checksums only
      // where S3 requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: Uint8Array | string, options: { contentType: string }): Promise<void> {
    assertFileKey(key);
    assertContentType(options.contentType);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: options.contentType }),
    );
  }

  async head(key: string): Promise<StoredFileInfo | null> {
    assertFileKey(key);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: out.ContentLength ?? 0, contentType: out.ContentType ?? 'application/octet-stream' };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async get(key: string): Promise<StoredFile | null> {
    assertFileKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) throw new Error(`S3 answered GET ${key} without a body`);
      return {
        size: out.ContentLength ?? 0,
        contentType: out.ContentType ?? 'application/octet-stream',
        body: out.Body.transformToWebStream(),
      };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async readStart(key: string, bytes: number): Promise<Uint8Array | null> {
    assertFileKey(key);
    assertStartBytes(bytes);
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=0-${bytes - 1}` }),
      );
      if (!out.Body) throw new Error(`S3 answered GET ${key} without a body`);
      // A service that ignores Range answers the whole object: only the asked-for bytes are kept.
      return (await out.Body.transformToByteArray()).subarray(0, bytes);
    } catch (err) {
      if (isMissing(err)) return null;
      // An empty object has no byte 0: S3 answers 416 to any range of it.
      if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 416) return new Uint8Array(0);
      throw err;
    }
  }

  async copy(from: string, to: string): Promise<boolean> {
    assertFileKey(from);
    assertFileKey(to);
    try {
      // Inside the bucket: no byte passes through the server. Keys hold only [A-Za-z0-9._/-].
      await this.client.send(
        new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: `${this.bucket}/${from}` }),
      );
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertFileKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async signedUploadUrl(key: string, options: SignedUploadOptions): Promise<SignedUpload> {
    assertFileKey(key);
    assertContentType(options.contentType);
    assertMaxBytes(options.maxBytes);
    assertLinkSeconds(options.expiresIn);
    const expiresAt = new Date(Date.now() + options.expiresIn * 1000);
    // The presigner signs only `host` unless told otherwise: signing the content type makes S3
    // refuse a PUT with another one. A presigned PUT cannot bound the size; confirmUpload() checks
    // it once the client is done.
    const url = await getSignedUrl(
      this.client,
      new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: options.contentType }),
      { expiresIn: options.expiresIn, signableHeaders: new Set(['content-type']) },
    );
    return { url, method: 'PUT', headers: { 'content-type': options.contentType }, expiresAt };
  }

  async signedDownloadUrl(key: string, options: SignedDownloadOptions): Promise<string> {
    assertFileKey(key);
    assertLinkSeconds(options.expiresIn);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ...(options.filename ? { ResponseContentDisposition: contentDisposition(options.filename) } : {}),
    });
    return getSignedUrl(this.client, command, { expiresIn: options.expiresIn });
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
