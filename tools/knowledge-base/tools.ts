// Knowledge-base tools: list, get, create, update and delete (to the trash) articles, and the ranked
// search assistants answer questions from. This file declares the tools; the data functions are
// store.ts, the rules docs/areas/knowledge-base.md.
import { z } from 'zod';
import { languageTagField } from '../../core/language-tag.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import {
  ARTICLE_SORT_FIELDS,
  type ArticleFields,
  articleMachine,
  articleRecords,
  articleSchema,
  insertArticle,
  listArticlePage,
  searchArticles,
  serializeArticle,
  writeArticle,
} from './store.ts';

const MAX_TITLE = 500;
const MAX_BODY = 500_000;
const MAX_CATEGORY = 200;
const MAX_TAGS = 50;
const MAX_TAG = 100;
const MAX_LOCALE = 16;
const MAX_QUERY = 200;
const MAX_HITS = 50;
const INT4 = 2_147_483_647;

// ---------------------------------------------------------------------------------------------
// Input fields

const titleField = z
  .string()
  .trim()
  .min(1)
  .max(MAX_TITLE)
  .refine(NO_NUL, nulMessage)
  .describe(`Title, 1-${MAX_TITLE} characters`);
const bodyField = z
  .string()
  .min(1)
  .max(MAX_BODY)
  .refine(NO_NUL, nulMessage)
  .describe('HTML body, sanitized (formatting, links, images kept; scripts removed)');
const categoryField = z
  .string()
  .trim()
  .max(MAX_CATEGORY)
  .refine(NO_NUL, nulMessage)
  .transform((v) => (v === '' ? null : v))
  .nullable()
  .describe(`Category (<= ${MAX_CATEGORY} chars); null for none`);
const tagField = z.string().trim().min(1).max(MAX_TAG).refine(NO_NUL, nulMessage).describe('A tag');
const tagsField = z
  .array(tagField)
  .max(MAX_TAGS)
  .describe(`Tags, at most ${MAX_TAGS}; duplicates are dropped`);
const statusField = articleMachine.schema.describe(
  'draft -> in_review|published; in_review -> draft|published; published -> archived|draft; archived -> draft',
);
const localeField = languageTagField(MAX_LOCALE).describe(
  `Language tag (BCP 47, <= ${MAX_LOCALE} chars): en, de, pt-BR`,
);
const sortOrderField = z.number().int().min(-INT4).max(INT4).describe('Position in lists, ascending');
const translationOfField = objectId('source article')
  .nullable()
  .describe('Source article (other locale) this translates; null for none');

const editableShape = {
  category: categoryField.optional(),
  tags: tagsField.optional(),
  is_public: z.boolean().optional().describe('Public (default false)'),
  is_ai_context: z.boolean().optional().describe('AI context once published (default false)'),
  sort_order: sortOrderField.optional(),
  translation_of: translationOfField.optional(),
};

type ArticleInput = {
  title?: string | undefined;
  body_html?: string | undefined;
  category?: string | null | undefined;
  tags?: string[] | undefined;
  status?: ArticleFields['status'];
  is_public?: boolean | undefined;
  is_ai_context?: boolean | undefined;
  sort_order?: number | undefined;
  locale?: string | undefined;
  translation_of?: string | null | undefined;
};

function fieldsOf(input: ArticleInput): ArticleFields {
  return {
    title: input.title,
    bodyHtml: input.body_html,
    category: input.category,
    tags: input.tags,
    status: input.status,
    isPublic: input.is_public,
    isAiContext: input.is_ai_context,
    sortOrder: input.sort_order,
    locale: input.locale,
    translationOf: input.translation_of,
  };
}

/** Query strings carry booleans as text; MCP callers send real booleans. Both are accepted. */
const booleanParam = (what: string) =>
  z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .describe(`${what} (true or false)`);

const idShape = { id: objectId('article') };
const output = z.object({ article: articleSchema });

const access = (kind: 'read' | 'write', permission: 'kb.view' | 'kb.create' | 'kb.edit' | 'kb.delete') =>
  ({ kind, resource: 'content', permission }) as const;

const translationErrors = [
  { code: 'conflict', when: 'the source article already has a translation in that locale' },
] as const;

// ---------------------------------------------------------------------------------------------
// Tools

export const listArticles = defineTool({
  name: 'list_knowledge_base_articles',
  title: 'List knowledge-base articles',
  description:
    'Lists knowledge-base articles (sort_order, then newest), with filters; `search` ranks full-text matches. Paged: `articles`, `totalPages`.',
  input: z.strictObject({
    ...listParams(ARTICLE_SORT_FIELDS),
    status: articleMachine.schema.optional().describe('Only this status'),
    locale: localeField.optional().describe('Only this locale'),
    category: z.string().trim().min(1).max(MAX_CATEGORY).optional().describe('Only this category'),
    tag: tagField.optional().describe('Only with this tag'),
    is_ai_context: booleanParam('Only AI-context or not').optional(),
    is_public: booleanParam('Only public or not').optional(),
  }),
  output: pagedOutput('articles', articleSchema),
  access: access('read', 'kb.view'),
  toolset: 'knowledge_base',
  handler: (input, { db, auth }) =>
    listArticlePage(
      db,
      auth.orgId,
      {
        status: input.status,
        locale: input.locale,
        category: input.category,
        tag: input.tag,
        isAiContext: input.is_ai_context,
        isPublic: input.is_public,
      },
      input,
    ),
});

export const getArticle = defineTool({
  name: 'get_knowledge_base_article',
  title: 'Get a knowledge-base article',
  description: 'Returns one knowledge-base article by id: HTML and plain-text body, status, translations.',
  input: z.strictObject(idShape),
  output,
  access: access('read', 'kb.view'),
  toolset: 'knowledge_base',
  async handler(input, { db, auth }) {
    const row = await articleRecords.getLive(db, auth.orgId, input.id);
    return { article: await serializeArticle(db, auth.orgId, row) };
  },
});

export const createArticle = defineTool({
  name: 'create_knowledge_base_article',
  title: 'Create a knowledge-base article',
  errors: [...translationErrors],
  description:
    'Creates a knowledge-base article (`title`, `body_html`), a draft by default; `translation_of` makes it a translation.',
  input: z.strictObject({
    title: titleField,
    body_html: bodyField,
    status: statusField.optional().describe('draft (default), in_review or published'),
    locale: localeField.optional().describe('Language tag (BCP 47): en (default), de, pt-BR'),
    ...editableShape,
  }),
  output,
  access: access('write', 'kb.create'),
  toolset: 'knowledge_base',
  async handler(input, ctx) {
    return {
      article: await insertArticle(ctx, {
        ...fieldsOf(input),
        title: input.title,
        bodyHtml: input.body_html,
      }),
    };
  },
});

export const updateArticle = defineTool({
  name: 'update_knowledge_base_article',
  title: 'Update a knowledge-base article',
  errors: [...translationErrors],
  description:
    'Changes the fields sent of a knowledge-base article; `status` moves it. A new title or body marks its translations outdated.',
  input: z.strictObject({
    ...idShape,
    title: titleField.optional(),
    body_html: bodyField.optional(),
    status: statusField.optional(),
    locale: localeField.optional(),
    ...editableShape,
  }),
  output,
  access: access('write', 'kb.edit'),
  annotations: { idempotentHint: true },
  toolset: 'knowledge_base',
  async handler(input, ctx) {
    return { article: await writeArticle(ctx, input.id, fieldsOf(input)) };
  },
});

export const deleteArticle = defineTool({
  name: 'delete_knowledge_base_article',
  title: 'Delete a knowledge-base article',
  description: 'Moves a knowledge-base article to the trash (restore_trash_item brings it back).',
  input: z.strictObject(idShape),
  output: messageOutput,
  access: access('write', 'kb.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'knowledge_base',
  async handler(input, ctx) {
    await articleRecords.trash(ctx, input.id);
    return { message: 'Article moved to the trash' };
  },
});

const hitSchema = z
  .object({
    id: z.string().describe('Article id (read it with get_knowledge_base_article)'),
    title: z.string().describe('Article title'),
    locale: z.string().describe('Article locale'),
    status: articleMachine.schema.describe('Article status'),
    snippet: z.string().describe('Plain-text words of the body around the match'),
    rank: z.number().describe('Relevance, higher is better; hits are sorted by it'),
  })
  .describe('A matching article');

export const searchKnowledgeBase = defineTool({
  name: 'search_knowledge_base',
  title: 'Search the knowledge base',
  description:
    'Searches knowledge-base articles to answer a question: best matches first, each with a snippet; read one with get_knowledge_base_article.',
  input: z.strictObject({
    query: z
      .string()
      .trim()
      .min(1)
      .max(MAX_QUERY)
      .refine(NO_NUL, nulMessage)
      .describe(`Words to search for, 1-${MAX_QUERY} characters`),
    locale: localeField.optional().describe('Only this locale'),
    status: articleMachine.schema.optional().describe('Only this status, e.g. published'),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_HITS)
      .default(10)
      .describe(`Most hits to return, 1-${MAX_HITS} (default 10)`),
  }),
  output: z.object({
    results: z.array(hitSchema).describe('Matching articles, most relevant first'),
    count: z.number().int().describe('How many hits were returned (at most `limit`)'),
  }),
  access: access('read', 'kb.view'),
  toolset: 'knowledge_base',
  async handler(input, { db, auth }) {
    const results = await searchArticles(
      db,
      auth.orgId,
      input.query,
      { locale: input.locale, status: input.status },
      input.limit,
    );
    return { results, count: results.length };
  },
});

export const knowledgeBaseTools = [
  listArticles,
  getArticle,
  createArticle,
  updateArticle,
  deleteArticle,
  searchKnowledgeBase,
];
