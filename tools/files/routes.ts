// File routes: the signed upload link. The link itself is answered by the store (the disk store's
// /files/{key} in rest/file-routes.ts, or the S3 bucket).
import { type Route, route } from '../../core/route.ts';
import { createUploadUrlTool } from './tools.ts';

export const fileRoutes: Route[] = [route('POST', '/files/upload-url', createUploadUrlTool, { status: 200 })];
