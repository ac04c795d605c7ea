// The OpenAPI 3.1 document and the human docs page. The document is generated from the route table
// and the tools' zod schemas (the same JSON Schemas MCP serves), so it cannot drift from what the
// API validates and returns. The modules under rest/openapi/ build it: types.ts (the document's
// types), components.ts (shared schemas, headers and error responses), paths.ts (one operation per
// route), auth-operations.ts (the REST surface's own routes), document.ts (the whole) and serve.ts
// (GET /api/v1/openapi.json and /docs). This file is their public face.
export { tagOf } from './openapi/paths.ts';
export { DOCS_PATH, mountOpenApi, OPENAPI_PATH } from './openapi/serve.ts';
export type * from './openapi/types.ts';
