// Serving the document and the human docs page (Swagger UI from node_modules: no CDN).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Hono } from 'hono';
import { compress } from 'hono/compress';
import { etag } from 'hono/etag';
import type { AppEnv } from '../../http/env.ts';
import { CATALOGUE, ROUTES } from '../../tools/index.ts';
import { buildOpenApiDocument } from './document.ts';
import type { OpenApiDocument } from './types.ts';
import { webhookEvents } from './webhooks.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/docs';

interface DocsAsset {
  type: string;
  /** The bytes, read from swagger-ui-dist or written here. */
  load: () => Promise<Uint8Array<ArrayBuffer> | string>;
}

function swaggerUiFile(name: string): () => Promise<Uint8Array<ArrayBuffer>> {
  // Resolved through Node's module resolution, so it works wherever npm put the package.
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return () => readFile(join(dir, name));
}

// A file rather than an inline script, so the page works under a CSP without 'unsafe-inline' scripts.
const DOCS_INIT = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayOperationId: true,
  docExpansion: 'list',
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** The only files under /docs/assets: a fixed list, so no request can name another file. */
const DOCS_ASSETS: Record<string, DocsAsset> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', load: swaggerUiFile('swagger-ui.css') },
  'swagger-ui-bundle.js': {
    type: 'text/javascript; charset=utf-8',
    load: swaggerUiFile('swagger-ui-bundle.js'),
  },
  'favicon-32x32.png': { type: 'image/png', load: swaggerUiFile('favicon-32x32.png') },
  'docs-init.js': { type: 'text/javascript; charset=utf-8', load: async () => DOCS_INIT },
};

const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>CRM API reference</title>
    <link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/assets/favicon-32x32.png">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/assets/docs-init.js"></script>
  </body>
</html>
`;

/** Registers GET /api/v1/openapi.json, GET /docs and its assets. All public: no token needed. */
export function mountOpenApi(app: Hono<AppEnv>): void {
  let document: OpenApiDocument | undefined;
  const loaded = new Map<string, Promise<Uint8Array<ArrayBuffer> | string>>();

  // The docs page loads 2.7 MB (Swagger UI's bundle and the document): compressed (gzip, about a
  // fifth) and with an ETag, so a slow link loads it in seconds and a reload costs a 304.
  for (const path of [OPENAPI_PATH, DOCS_PATH, `${DOCS_PATH}/assets/*`]) app.use(path, compress(), etag());

  app.get(OPENAPI_PATH, (c) => {
    // Built on first use and kept: the route table does not change while the process runs.
    document ??= buildOpenApiDocument(ROUTES, webhookEvents(CATALOGUE.eventSchemas));
    // Revalidated (ETag) rather than kept: a new version of the server may change it.
    c.header('Cache-Control', 'public, max-age=0, must-revalidate');
    return c.json(document);
  });

  // The app-wide Content-Security-Policy (rest/operations.ts) already allows only this origin.
  app.get(DOCS_PATH, (c) => {
    c.header('Cache-Control', 'public, max-age=0, must-revalidate');
    return c.html(DOCS_HTML);
  });
  app.get(`${DOCS_PATH}/`, (c) => c.redirect(DOCS_PATH, 301));

  app.get(`${DOCS_PATH}/assets/:file`, async (c) => {
    const name = c.req.param('file');
    const asset = Object.hasOwn(DOCS_ASSETS, name) ? DOCS_ASSETS[name] : undefined;
    if (!asset) return c.notFound();
    let body = loaded.get(name);
    if (!body) {
      body = asset.load();
      loaded.set(name, body);
      // A failed read is not cached, so the next request tries again.
      body.catch(() => loaded.delete(name));
    }
    c.header('Content-Type', asset.type);
    c.header('Cache-Control', 'public, max-age=3600');
    return c.body(await body);
  });
}
