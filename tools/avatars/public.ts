// The avatar URL (outside /api/v1, no token: an <img> tag cannot send one): GET /avatars/{id}
// answers 302 to a short-lived signed download link of the stored picture. The id (128 random bits)
// is the only credential; it is looked up with system access, as the proposal page finds its
// record. The redirect may be cached for a few minutes, well inside the link's lifetime, so a
// browser asks again before the link it holds expires. A malformed or unknown id is a plain 404.
import type { PublicRoute } from '../../core/area.ts';
import { AVATAR_REDIRECT_CACHE_SECONDS, AVATAR_VIEW_SECONDS, findServedAvatar } from './store.ts';

function notFound(): Response {
  return new Response(
    JSON.stringify({ error: 'Not found', code: 'not_found', message: 'Avatar not found' }),
    {
      status: 404,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    },
  );
}

export const avatarPublicRoutes: PublicRoute[] = [
  {
    method: 'GET',
    path: '/avatars/:id',
    async handle(request, services) {
      const key = await findServedAvatar(services.db.system, request.params.id ?? '');
      if (key === null) return notFound();
      const location = await services.files.signedDownloadUrl(key, { expiresIn: AVATAR_VIEW_SECONDS });
      return new Response(null, {
        status: 302,
        headers: {
          location,
          'cache-control': `private, max-age=${AVATAR_REDIRECT_CACHE_SECONDS}`,
        },
      });
    },
  },
];
