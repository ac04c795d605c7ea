// `crm admin ... --url <server>`: the admin commands through a running server's admin API
// (/admin/v1, rest/admin-routes.ts) instead of the database. The embedded database belongs to the
// one process that opened it (core/db/lock.ts), so this is how an operator changes a running
// embedded server; on PostgreSQL it works the same. The token is the server's CRM_ADMIN_TOKEN,
// read from the environment only (a flag would leave it in the shell history and process list).
import { httpCall, isRecord, parseBaseUrl, UsageError } from './remote.ts';

export interface AdminRemote {
  base: URL;
  token: string;
}

export function adminRemote(url: string): AdminRemote {
  const token = process.env.CRM_ADMIN_TOKEN;
  if (!token) {
    throw new UsageError(
      "admin commands with --url need CRM_ADMIN_TOKEN, the server's admin token, in the environment",
    );
  }
  return { base: parseBaseUrl(url), token };
}

/** One admin API call; the JSON object it answers (the same shapes core/admin.ts returns). */
export async function adminCall(
  remote: AdminRemote,
  method: 'POST' | 'PATCH',
  path: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const answer = await httpCall({ ...remote, method, path: `/admin/v1${path}`, body });
  if (answer.kind !== 'json' || !isRecord(answer.value)) {
    throw new UsageError(`${method} /admin/v1${path} did not answer a JSON object: is --url a crm server?`);
  }
  return answer.value;
}
