// Knowledge-base articles as MCP resources (crm://knowledge-base/{id}), read through
// get_knowledge_base_article (sanitized HTML and its plain text) and listed through
// list_knowledge_base_articles: the listing shows the published AI-context articles, what an
// assistant grounds its answers in; any article stays readable by its URI.
import { defineRecordResource, textField } from '../../core/resources.ts';
import { getArticle, listArticles } from './tools.ts';

export const articleResource = defineRecordResource({
  collection: 'knowledge-base',
  title: 'Knowledge-base article',
  description:
    'A knowledge-base article as get_knowledge_base_article answers it: title, body as sanitized HTML (body_html) and as plain text (body_text), locale, status. Listed: the published AI-context articles.',
  get: getArticle,
  list: listArticles,
  items: 'articles',
  recentSort: '-updated_at',
  listFilter: { status: 'published', is_ai_context: true },
  label: (article) => textField(article, 'title') ?? 'Article',
});
