// Connected-account tools: the caller's own SMTP accounts (list, get, create, update, delete), a real
// verification of the server and login, a new inbound secret, and the inbound mails an account
// received. Another user's account is a 404 whatever the caller's role. The data functions are
// store.ts; the inbound hook is inbound.ts.
import { isIP } from 'node:net';
import { z } from 'zod';
import { SMTP_FAILURE_CODES } from '../../core/account-mail.ts';
import type { AccountRemovedHook } from '../../core/area.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool, type Tool } from '../../core/tool.ts';
import { inboundEmailSchema, listInboundEmailsOf } from './inbound-store.ts';
import {
  connectedAccountSchema,
  deleteAccount,
  insertAccount,
  listOwnAccounts,
  ownAccountOr404,
  patchAccount,
  recordVerification,
  rotateInboundSecret,
  serializeAccount,
  smtpSettingsOf,
} from './store.ts';

const TOOLSET = 'email';

type AccountPermission = 'connected_accounts.view' | 'connected_accounts.manage';
const access = (kind: 'read' | 'write', permission: AccountPermission) =>
  ({ kind, resource: 'email', permission }) as const;

// ---------------------------------------------------------------------------------------------
// Input fields

/** A DNS host name (letters, digits, hyphens, dots), no scheme, port, path or spaces. */
const HOST_NAME =
  /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

const emailField = z
  .email('must be an email address')
  .max(320)
  .describe('The address mail is sent from (also the From header), at most 320 characters');
const displayNameField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine(NO_NUL, nulMessage)
  .refine((s) => !/[\r\n]/.test(s), 'must be one line')
  .describe('The name shown beside the address in the From header, 1-200 characters');
const hostField = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .refine(
    (s) => HOST_NAME.test(s) || isIP(s) !== 0,
    'must be a host name or an IP address (no scheme, port or path)',
  )
  .describe('SMTP server host name or IP address, 1-253 characters, e.g. smtp.example.com');
const portField = z
  .number()
  .int()
  .min(1)
  .max(65535)
  .describe('SMTP server port, 1-65535 (465 for TLS from the first byte, 587 or 25 for STARTTLS)');
const secureField = z
  .boolean()
  .describe('True: TLS from the first byte (port 465); false: plain, upgraded with STARTTLS (ports 587, 25)');
const requireTlsField = z
  .boolean()
  .describe(
    'With secure false: true (the default) logs in only after a STARTTLS upgrade (a server without it fails verify with tls_required); false allows a plain login when the server offers no STARTTLS',
  );
const usernameField = z
  .string()
  .min(1)
  .max(320)
  .refine(NO_NUL, nulMessage)
  .describe('SMTP login name, 1-320 characters');
const passwordField = z
  .string()
  .min(1)
  .max(1000)
  .refine(NO_NUL, nulMessage)
  .describe('SMTP password, 1-1000 characters; stored encrypted, never shown again');

const smtpInput = z
  .strictObject({
    host: hostField,
    port: portField,
    secure: secureField,
    require_tls: requireTlsField.default(true),
    username: usernameField,
    password: passwordField,
  })
  .describe('The SMTP server and login');

const smtpPatch = z
  .strictObject({
    host: hostField.optional(),
    port: portField.optional(),
    secure: secureField.optional(),
    require_tls: requireTlsField.optional(),
    username: usernameField.optional(),
    password: passwordField
      .optional()
      .describe(
        'A new SMTP password (replaces the stored one); required when host, port or username changes',
      ),
  })
  .describe(
    'SMTP fields to change; any change makes the account unverified again; a new host, port or username needs the password too',
  );

const accountId = { id: objectId('connected account') };
const accountOutput = z.object({ connected_account: connectedAccountSchema });
const notYours = { code: 'not_found', when: "the account is not one of the caller's own" } as const;
const duplicateAddress = {
  code: 'conflict',
  when: 'the caller already connected an account with this address (case-insensitive)',
} as const;

// ---------------------------------------------------------------------------------------------
// Tools

export const listConnectedAccounts = defineTool({
  name: 'list_connected_accounts',
  title: 'List your connected accounts',
  description:
    "Lists the caller's own connected SMTP accounts, newest first, with their verification status and the inbound URL and " +
    'signing key to give a mail provider. Passwords are never shown. Paginated: returns `connected_accounts` plus ' +
    '`total`, `page`, `limit`, `totalPages`; `limit` is 1-100 (default 25).',
  input: z.strictObject({ page: listParams(['created_at']).page, limit: listParams(['created_at']).limit }),
  output: pagedOutput('connected_accounts', connectedAccountSchema),
  access: access('read', 'connected_accounts.view'),
  toolset: TOOLSET,
  async handler(input, ctx) {
    return listOwnAccounts(ctx, input);
  },
});

export const getConnectedAccount = defineTool({
  name: 'get_connected_account',
  title: 'Get a connected account',
  description:
    "Returns one of the caller's own connected SMTP accounts by id: address, server, login name, verification status " +
    "(with the reason of the last failure), inbound URL and signing key. Another user's account is not found.",
  input: z.strictObject(accountId),
  output: accountOutput,
  access: access('read', 'connected_accounts.view'),
  toolset: TOOLSET,
  async handler(input, { db, auth, services }) {
    const row = await ownAccountOr404(db, auth.orgId, auth.userId, input.id);
    return { connected_account: serializeAccount(services, row) };
  },
});

export const createConnectedAccount = defineTool({
  name: 'create_connected_account',
  title: 'Connect an SMTP account',
  description:
    "Connects the caller's SMTP mailbox account for sending email to leads. The password is stored encrypted and never returned. The account starts `unverified`: check it with verify_connected_account (only a verified account can schedule mail). The answer includes `inbound_url` and `inbound_signing_key` for routing replies back.",
  input: z.strictObject({
    email: emailField,
    display_name: displayNameField.optional(),
    smtp: smtpInput,
  }),
  output: accountOutput,
  access: access('write', 'connected_accounts.manage'),
  errors: [duplicateAddress],
  toolset: TOOLSET,
  async handler(input, ctx) {
    return { connected_account: serializeAccount(ctx.services, await insertAccount(ctx, input)) };
  },
});

export const updateConnectedAccount = defineTool({
  name: 'update_connected_account',
  title: 'Update a connected account',
  description:
    "Changes only the fields sent of one of the caller's connected accounts (`smtp` fields merge). Changing smtp host, port or username needs `smtp.password` in the same call. Any `smtp` change makes the account `unverified` until verify_connected_account checks it.",
  input: z.strictObject({
    ...accountId,
    email: emailField.optional(),
    display_name: displayNameField
      .nullable()
      .optional()
      .describe('The name shown beside the address, 1-200 characters; null removes it'),
    smtp: smtpPatch.optional(),
  }),
  output: accountOutput,
  access: access('write', 'connected_accounts.manage'),
  errors: [notYours, duplicateAddress],
  annotations: { idempotentHint: true },
  toolset: TOOLSET,
  async handler(input, ctx) {
    const { id, ...changes } = input;
    return { connected_account: serializeAccount(ctx.services, await patchAccount(ctx, id, changes)) };
  },
});

/** delete_connected_account, running the accountRemoved hooks of the other areas (tools/index.ts collects them). */
export function deleteConnectedAccountTool(hooks: readonly AccountRemovedHook[]) {
  return defineTool({
    name: 'delete_connected_account',
    title: 'Delete a connected account',
    description:
      "Removes one of the caller's connected accounts for good, with its stored password. Its scheduled emails that have " +
      'not been sent yet are cancelled (last_error "connected account removed"); sent ones keep their history.',
    input: z.strictObject(accountId),
    output: messageOutput,
    access: access('write', 'connected_accounts.manage'),
    errors: [notYours],
    annotations: { destructiveHint: true },
    toolset: TOOLSET,
    async handler(input, ctx) {
      const { cancelled } = await deleteAccount(ctx, input.id, hooks);
      return {
        message:
          cancelled === 0
            ? 'Connected account deleted'
            : `Connected account deleted; ${cancelled} scheduled email${cancelled === 1 ? '' : 's'} cancelled`,
      };
    },
  });
}

export const verifyConnectedAccount = defineTool({
  name: 'verify_connected_account',
  title: 'Verify a connected account',
  description: `Opens a real SMTP session with one of the caller's accounts (EHLO, TLS or STARTTLS unless \`require_tls\` is false, login) and records the outcome: \`status\` verified, or error with \`status_code\` (${SMTP_FAILURE_CODES.join(', ')}) and \`status_reason\`. A failed check is a normal 200 answer. Sends no mail.`,
  input: z.strictObject(accountId),
  output: accountOutput,
  access: access('write', 'connected_accounts.manage'),
  errors: [notYours],
  reachesWithoutSending: "logs in to the caller's own SMTP server; no mail is sent",
  annotations: { openWorldHint: true, idempotentHint: true },
  toolset: TOOLSET,
  // The SMTP session takes seconds (up to its time limits against a server that stalls): it runs
  // outside the request's transaction, so slow servers cannot hold the database's connections.
  async outside(input, ctx) {
    const account = await ctx.read((db) => ownAccountOr404(db, ctx.auth.orgId, ctx.auth.userId, input.id));
    const result = await ctx.services.accountMail.verify(smtpSettingsOf(ctx.services, account));
    return { result, checkedVersion: account.updatedAt };
  },
  async handler(input, ctx) {
    const { result, checkedVersion } = ctx.outside;
    return {
      connected_account: serializeAccount(
        ctx.services,
        await recordVerification(ctx, input.id, result, checkedVersion),
      ),
    };
  },
});

export const rotateInboundSecretTool = defineTool({
  name: 'rotate_inbound_secret',
  title: 'Rotate the inbound secret',
  description:
    "Issues a new inbound token and signing key for one of the caller's connected accounts: the answer shows the new " +
    '`inbound_url` and `inbound_signing_key`; the old URL answers 404 from now on. Update your mail provider afterwards.',
  input: z.strictObject(accountId),
  output: accountOutput,
  access: access('write', 'connected_accounts.manage'),
  errors: [notYours],
  toolset: TOOLSET,
  async handler(input, ctx) {
    return { connected_account: serializeAccount(ctx.services, await rotateInboundSecret(ctx, input.id)) };
  },
});

export const listInboundEmails = defineTool({
  name: 'list_inbound_emails',
  title: 'List inbound emails of an account',
  description:
    "Lists the mails received on one of the caller's connected accounts through its inbound URL, newest first: sender, " +
    'recipient, subject, Message-ID, the lead and contact matched by the sender address, the scheduled email it ' +
    'answers and the activity recorded. Paginated: returns `inbound_emails` plus `total`, `page`, `limit`, `totalPages`.',
  input: z.strictObject({
    ...accountId,
    page: listParams(['received_at']).page,
    limit: listParams(['received_at']).limit,
  }),
  output: pagedOutput('inbound_emails', inboundEmailSchema),
  access: access('read', 'connected_accounts.view'),
  errors: [notYours],
  toolset: TOOLSET,
  async handler(input, ctx) {
    await ownAccountOr404(ctx.db, ctx.auth.orgId, ctx.auth.userId, input.id);
    return listInboundEmailsOf(ctx.db, ctx.auth.orgId, input.id, input);
  },
});

/** The area's tools, with its delete tool (deleteConnectedAccountTool). */
export function connectedAccountTools<D extends Tool>(deleteConnectedAccount: D) {
  return [
    listConnectedAccounts,
    getConnectedAccount,
    createConnectedAccount,
    updateConnectedAccount,
    deleteConnectedAccount,
    verifyConnectedAccount,
    rotateInboundSecretTool,
    listInboundEmails,
  ];
}
