import { defineArea } from '../../core/area.ts';
import { knowledgeBaseCatalogue } from './catalogue.ts';
import { articleResource } from './resources.ts';
import { knowledgeBaseRoutes } from './routes.ts';
import { articleMachine, articleTrashTypes } from './store.ts';
import { knowledgeBaseTools } from './tools.ts';

/**
 * The knowledge base: articles with sanitized HTML bodies, a review-and-publish machine,
 * translations of one source article, ranked full-text search, and the AI-context articles
 * assistants read as MCP resources (and other areas through lookups.ts).
 */
export const knowledgeBaseArea = defineArea({
  name: 'knowledge-base',
  uses: [],
  tools: knowledgeBaseTools,
  routes: knowledgeBaseRoutes,
  tags: {
    'knowledge-base':
      'Knowledge-base articles: sanitized HTML, review and publishing, translations, ranked full-text search.',
  },
  brings: knowledgeBaseCatalogue,
  permissions: ['kb.view', 'kb.create', 'kb.edit', 'kb.delete'],
  // The specification names no knowledge-base events.
  events: [],
  toolsets: ['knowledge_base'],
  trashTypes: articleTrashTypes,
  stateMachines: [articleMachine],
  resources: [articleResource],
});
