// What the knowledge-base area brings to the kernel's catalogues: its role permissions with the tier
// of role that holds each (core/access.ts), and its MCP toolset (core/toolsets.ts). tools/index.ts
// collects every area's declaration; the declaration merging below keeps the names checked at
// compile time. Its token scope family is `content` (read:content / write:content), which the
// surveys area declares for both (tools/surveys/catalogue.ts). No plan feature (every plan has it)
// and no events (the specification names none for the knowledge base).
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const knowledgeBaseCatalogue = {
  permissions: {
    'kb.view': 'read',
    'kb.create': 'write',
    'kb.edit': 'write',
    // Like leads and contacts: members write articles, managers and up delete them.
    'kb.delete': 'manage',
  },
  toolsets: {
    knowledge_base:
      'Knowledge-base articles: list, read, write, translate and delete them, and search them to answer questions.',
  },
} as const satisfies AreaCatalogue;

type KnowledgeBasePermissions = (typeof knowledgeBaseCatalogue)['permissions'];

type KnowledgeBaseToolsets = (typeof knowledgeBaseCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends KnowledgeBaseToolsets {}
}

declare module '../../core/access.ts' {
  interface PermissionCatalog extends KnowledgeBasePermissions {}
}
