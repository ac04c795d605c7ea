// Which methods a known path answers, for the 405 a wrong method gets (with `Allow`). Read from the
// app's own route list once every route is mounted, so a route added anywhere (the REST table, the
// auth, admin and operations routes) is covered without a second list to keep in step.
import type { Hono } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';

/**
 * Returns a function naming the methods `path` answers, empty for an unknown path. Handlers
 * registered for every method (middleware, `/mcp`) are left out: such a path never answers 405.
 */
export function methodsByPath<E extends object>(app: Hono<E>): (path: string) => string[] {
  const router = new TrieRouter<string>();
  const seen = new Set<string>();
  for (const { method, path } of app.routes) {
    if (method === 'ALL' || seen.has(`${method} ${path}`)) continue;
    seen.add(`${method} ${path}`);
    router.add('ALL', path, method);
  }
  return (path) => {
    const methods = new Set(router.match('GET', path)[0].map(([method]) => method));
    // Hono answers HEAD with the GET handler.
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
