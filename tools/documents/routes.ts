// The routes every document has, in the order the OpenAPI document lists them: the collection (list,
// create) and one document (get; PATCH and PUT both merge like a PATCH; delete a draft). Each area
// adds its own moves after them.
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';

export function documentRoutes(
  path: string,
  tools: { list: Tool; create: Tool; get: Tool; update: Tool; remove: Tool },
): Route[] {
  return [
    route('GET', path, tools.list),
    route('POST', path, tools.create),
    route('GET', `${path}/:id`, tools.get),
    route('PATCH', `${path}/:id`, tools.update),
    route('PUT', `${path}/:id`, tools.update),
    route('DELETE', `${path}/:id`, tools.remove),
  ];
}

/** A document's PDF: a file route answering the bytes, not JSON. */
export function pdfRoute(path: string, tool: Tool): Route {
  return route('GET', `${path}/:id/pdf`, tool, { file: { mediaType: 'application/pdf' } });
}
