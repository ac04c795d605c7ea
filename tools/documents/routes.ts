// The routes every document has, in the order the OpenAPI document lists them: the collection (list,
// create) and one document (get; PATCH and PUT both merge like a PATCH; delete a draft), found by
// name among the kind's tools. Each area adds its own moves after them.
import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';
import type { DocumentKind } from './send.ts';

export function documentRoutes(kind: DocumentKind, tools: readonly Tool[]): Route[] {
  const path = `/${kind}s`;
  // The kit's tool builders (document-tools.ts) name them; a kind without one of them cannot start.
  const named = (name: string): Tool => {
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new Error(`the ${kind} tools have no ${name}`);
    return tool;
  };
  const update = named(`update_${kind}`);
  return [
    route('GET', path, named(`list_${kind}s`)),
    route('POST', path, named(`create_${kind}`)),
    route('GET', `${path}/:id`, named(`get_${kind}`)),
    route('PATCH', `${path}/:id`, update),
    route('PUT', `${path}/:id`, update),
    route('DELETE', `${path}/:id`, named(`delete_${kind}`)),
  ];
}

/** A document's PDF: a file route answering the bytes, not JSON. */
export function pdfRoute(path: string, tool: Tool): Route {
  return route('GET', `${path}/:id/pdf`, tool, { file: { mediaType: 'application/pdf' } });
}
