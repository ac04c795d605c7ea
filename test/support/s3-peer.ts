// A real S3-compatible server for tests: s3rver on 127.0.0.1 (a free port) over a temp directory,
// with one bucket. It checks SigV4 signatures (credentials S3RVER/S3RVER) but not sizes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface S3Peer {
  /** The S3_* environment that points the server at this peer. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startS3Peer(bucket = 'crm-test'): Promise<S3Peer> {
  const directory = mkdtempSync(join(tmpdir(), 'crm-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  return {
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
