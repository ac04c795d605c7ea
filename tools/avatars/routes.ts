// Avatar routes: the two steps of an upload under /files/avatar (the upload link, then the
// confirmation), and removing an avatar (a DELETE whose JSON body names the target). The picture
// itself is served by the public route /avatars/{id} (public.ts).
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';

/** The tools are built by the area (they read the role table). */
export function avatarRoutes(built: { createUploadUrl: Tool; confirm: Tool; remove: Tool }): Route[] {
  return [
    route('POST', '/files/avatar/upload-url', built.createUploadUrl, { status: 200 }),
    route('POST', '/files/avatar/confirm', built.confirm, { status: 200 }),
    route('DELETE', '/files/avatar', built.remove),
  ];
}
