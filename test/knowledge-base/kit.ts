// The test kit of tools/knowledge-base (test/README.md "Test kits"): the article status machine is driven by PATCH status.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { kbArticles } from '../../tools/knowledge-base/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { createAt, readAt } from '../fixtures/kit-helpers.ts';

const ARTICLE = {
  body: { title: 'Resetting a password', body_html: '<p>Open the settings.</p>' },
  text: 'title',
};

export const kit = defineKit({
  area: 'knowledge-base',
  bodies: {
    create_knowledge_base_article: ARTICLE,
    update_knowledge_base_article: { body: { title: 'Renamed' }, text: 'title' },
    delete_knowledge_base_article: NO_BODY,
  },
  victims: {
    '/knowledge-base': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system.insert(kbArticles).values({
        id,
        orgId: org.orgId,
        title: 'Victim article',
        bodyHtml: '<p>Private</p>',
        bodyText: 'Private',
      });
      return {
        id,
        read: () => t.services.db.system.select().from(kbArticles).where(eq(kbArticles.id, id)),
      };
    },
  },
  machines: {
    'knowledge-base article': {
      moves:
        'draft -> in_review, published; in_review -> draft, published; published -> draft, archived; archived -> draft',
      field: 'status',
      driver: (scope) => ({
        create: () => createAt(scope, '/api/v1/knowledge-base', 'article', ARTICLE.body),
        move: (id, to) =>
          scope.t.request('PATCH', `/api/v1/knowledge-base/${id}`, {
            token: scope.org.token,
            body: { status: to },
          }),
        read: (id) => readAt(scope, `/api/v1/knowledge-base/${id}`, 'article'),
        stateOf: (record) => String(record.status),
      }),
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      for (const n of [1, 2, 3])
        await seed('/api/v1/knowledge-base', {
          title: `Fuzz article ${n}`,
          body_html: `<p>Fuzz body ${n}</p>`,
        });
    },
  },
});
