import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * Default-suite files this run leaves out, each with the reason its subject cannot depend on the
 * database server or on Redis: it touches no database, or runs the embedded one whatever the suite,
 * or tests a layer in front of the tools (HTTP, the MCP protocol, the documents) whose records the
 * area tests already exercise here. Everything not listed (every area's tests, tenancy, RLS,
 * concurrency, numbering, idempotency, events, queues, input rules) runs on both, and so
 * does any new test file until it is listed here with its reason.
 */
const EMBEDDED_ONLY: Record<string, string> = {
  'test/cli.test.ts': 'the crm command on its own embedded DATA_DIR (the test clears DATABASE_URL)',
  'test/cli-one-process.test.ts': 'the DATA_DIR lock of the embedded database and the crm client',
  'test/cli-remote.test.ts': 'the crm client of a server; the server side is the REST tests',
  'test/shutdown.test.ts': 'a crm serve process on an embedded DATA_DIR draining on SIGTERM',
  'test/pdf.test.ts': 'renders PDFs from values; no database',
  'test/support/twilio-peer.test.ts': 'the Twilio-compatible test peer over HTTP; no database',
  'test/ports/telephony.test.ts': 'the Twilio adapter against the test peer; no database',
  'test/knowledge-base/sanitize.test.ts': 'the article sanitizer on strings; no database',
  'test/telephony/signature.test.ts':
    'the hook signature check against the Twilio peer’s signatures; no database',
  'test/voice-relay/answer.test.ts': 'the relay’s rules answers on values; no database',
  'test/ports/ai-stream.test.ts': 'the model adapter against a local fake model server; no database',
  'test/money.test.ts': 'rounding arithmetic; no database',
  'test/records.test.ts': "the record helper's pure rules; no database",
  'test/text-search.test.ts': 'the word-prefix helpers of a search total, on strings; no database',
  'test/webhook-signing.test.ts': 'signature bytes; no database',
  'test/ssrf.test.ts': 'address rules of the delivery guard; no database',
  'test/connected-accounts/smtp-pool.test.ts':
    'the SMTP adapter’s pooled sessions against a local SMTP peer; no database',
  'test/layers.test.ts': 'import statements of the sources',
  'test/areas.test.ts': 'the declarations of the areas',
  'test/manifest.test.ts': 'the committed manifest against the registry',
  'test/tool-descriptions.test.ts': 'the tool schemas',
  'test/route-consistency.test.ts': 'the route table',
  'test/openapi.test.ts': 'the OpenAPI document and the docs page built from the registry',
  'test/first-steps.test.ts': 'the root, docs caching, start-up warnings and the RATE_LIMITS switch',
  'test/http-details.test.ts': '413, 405, token placement and Host checks, all before any tool runs',
  'test/aborted-request.test.ts': 'a client closing mid-body, handled before any tool runs',
  'test/logging.test.ts': 'the request log line; the secrets in failed writes stay in log-secrets',
  'test/openapi-fuzz.test.ts':
    'whether answers match the OpenAPI document: statuses and bodies come from the validation and the ' +
    "document, the same on any engine; its valid writes go through the stores every area's tests run here",
  'test/parity.test.ts': 'REST and MCP refusing the same invalid input before the handler',
  'test/mcp.test.ts': 'MCP over HTTP with the official clients: the protocol, not the records',
  'test/mcp-toolsets.test.ts': 'which tools MCP lists for a selection',
  'test/mcp-toolsets-url.test.ts': 'the toolsets and /readonly chosen by the MCP URL, before any tool runs',
  'test/mcp-tool-list-size.test.ts': 'the bytes of tools/list, built from the declarations',
  'test/tool-findability.test.ts': "which tool a task's words lead to; the declarations only",
  'test/mcp-discover.test.ts': 'server/discover and the cache hints of the protocol, before any tool runs',
  'test/mcp-elicitation.test.ts':
    "how MCP asks a person to confirm a preview; the sending is the areas' tests",
  'test/conformance-runner.test.ts': "the conformance runner's judging rules and expected-failures file",
  'test/mcp-limits.test.ts': 'JSON-RPC batches and per-IP budgets in front of the tools',
  'test/mcp-results.test.ts': 'how MCP maps results and errors of the tools',
  'test/ports/secrets.test.ts': 'AES-GCM at rest and its key files; no database',
  'test/ports/mail.test.ts': 'the SMTP and .eml mail adapters; no database',
  'test/ports/storage.test.ts': 'the disk and S3 file stores',
  'test/webhook-receiver-libraries.test.ts': 'third-party libraries verifying our signatures',
};

for (const file of Object.keys(EMBEDDED_ONLY)) {
  // A renamed or removed file must leave the list too, or the list stops saying what runs where.
  if (!existsSync(new URL(file, import.meta.url)))
    throw new Error(`EMBEDDED_ONLY names ${file}, which is gone`);
}

// The services suite: the tests against a real PostgreSQL server (a fresh database per test file)
// and Redis, plus the tests under test/services that need PostgreSQL or Redis themselves.
export default defineConfig({
  test: {
    ...base.test,
    include: [...(base.test?.include ?? []), 'test/services/**/*.test.ts'],
    exclude: ['node_modules/**', ...Object.keys(EMBEDDED_ONLY)],
    // Files share a worker's loaded modules as in the default suite. The ioredis "Connection is
    // closed" that once made this run isolate every file was a queue closed during its start
    // (core/queue-bullmq.ts settleQueueStart), not a connection leaking between files.
    isolate: false,
    env: {
      TEST_DATABASE_URL: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
      TEST_REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      // PgBouncer in front of TEST_DATABASE_URL's server (.ci/run): test contexts reach their
      // databases through it (test/fixtures/context.ts). Empty: directly.
      TEST_DATABASE_POOLER_URL: process.env.TEST_DATABASE_POOLER_URL ?? '',
    },
  },
});
