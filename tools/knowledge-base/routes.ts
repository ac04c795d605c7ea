// Knowledge-base routes: the collection, the search, and one article. PUT merges exactly like PATCH
// (only the fields sent change), as on every record resource.
import { type Route, route } from '../../core/route.ts';
import {
  createArticle,
  deleteArticle,
  getArticle,
  listArticles,
  searchKnowledgeBase,
  updateArticle,
} from './tools.ts';

export const knowledgeBaseRoutes: Route[] = [
  route('GET', '/knowledge-base', listArticles),
  route('POST', '/knowledge-base', createArticle),
  route('GET', '/knowledge-base/search', searchKnowledgeBase),
  route('GET', '/knowledge-base/:id', getArticle),
  route('PATCH', '/knowledge-base/:id', updateArticle),
  route('PUT', '/knowledge-base/:id', updateArticle),
  route('DELETE', '/knowledge-base/:id', deleteArticle),
];
