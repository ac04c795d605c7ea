// A scripted browser for the authorization pages: it keeps cookies, reads the page's one form (its
// hidden fields and checkboxes as the HTML has them) and posts it as a browser would, so tests drive
// the sign-in and consent exactly through the forms a person sees. Also PKCE helpers.
import { createHash, randomBytes } from 'node:crypto';

export type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function decode(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function attr(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match?.[1] === undefined ? undefined : decode(match[1]);
}

export interface PageForm {
  action: string;
  /** Hidden fields and the checkboxes checked by default, as the browser would send them untouched. */
  fields: Record<string, string>;
  /** Every checkbox's name. */
  checkboxes: string[];
}

/** The page's form, or throws with the page's text when there is none. */
export function formOf(html: string): PageForm {
  const form = /<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/.exec(html);
  if (!form?.[1] || form[2] === undefined)
    throw new Error(`no form on the page: ${html.replace(/<[^>]+>/g, ' ')}`);
  const fields: Record<string, string> = {};
  const checkboxes: string[] = [];
  for (const [tag] of form[2].matchAll(/<input [^>]*>/g)) {
    const type = attr(tag, 'type');
    const name = attr(tag, 'name');
    if (!name) continue;
    if (type === 'hidden') fields[name] = attr(tag, 'value') ?? '';
    if (type === 'checkbox') {
      checkboxes.push(name);
      if (/\schecked\b/.test(tag)) fields[name] = attr(tag, 'value') ?? 'on';
    }
  }
  return { action: decode(form[1]), fields, checkboxes };
}

/** A browser session against one origin: cookies kept between requests, redirects not followed. */
export class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(
    private readonly fetch: Fetch,
    private readonly origin: string,
  ) {}

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  async get(url: string): Promise<Response> {
    const res = await this.fetch(url, { headers: this.cookieHeader(), redirect: 'manual' });
    this.remember(res);
    return res;
  }

  /** Posts `form` (its fields, with `changes` applied: a null removes a field) as a browser would. */
  async submit(form: PageForm, changes: Record<string, string | null> = {}): Promise<Response> {
    const fields = { ...form.fields };
    for (const [name, value] of Object.entries(changes)) {
      if (value === null) delete fields[name];
      else fields[name] = value;
    }
    const url = new URL(form.action, this.origin).href;
    const res = await this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.cookieHeader() },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });
    this.remember(res);
    return res;
  }
}

export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  challenge: string;
  state?: string;
  scope?: string;
  resource?: string;
}

export function authorizeUrl(
  origin: string,
  request: AuthorizeRequest,
  extra: Record<string, string> = {},
): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    code_challenge: request.challenge,
    code_challenge_method: 'S256',
    ...(request.state !== undefined && { state: request.state }),
    ...(request.scope !== undefined && { scope: request.scope }),
    ...(request.resource !== undefined && { resource: request.resource }),
    ...extra,
  });
  return `${origin}/oauth/authorize?${params}`;
}

/**
 * Opens the authorize URL, signs in through the form and answers the consent form (Allow unless
 * `deny`; `changes` narrow the checkboxes). Answers the final response (a 302 to the client, or a page).
 */
export async function authorizeThroughForms(
  browser: Browser,
  url: string,
  person: { email: string; password: string },
  options: { deny?: boolean; changes?: Record<string, string | null> } = {},
): Promise<Response> {
  const start = await browser.get(url);
  if (start.status !== 200) return start;
  const signIn = formOf(await start.text());
  const consent = await browser.submit(signIn, { email: person.email, password: person.password });
  if (consent.status !== 200) return consent;
  const form = formOf(await consent.text());
  return browser.submit(form, { decision: options.deny ? 'deny' : 'allow', ...options.changes });
}

/** The form-encoded POST a client sends to the token or revocation endpoint. */
export function tokenRequest(
  fetch: Fetch,
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}
