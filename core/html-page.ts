// The HTML pages a person sees outside the API (a proposal's public page, the OAuth sign-in and
// consent pages): one document shell, one escaping rule, and one strict Content-Security-Policy.
// No script may run, nothing is loaded from anywhere, the page cannot be framed, and only the
// page's own inline style sheet applies, allowed by a nonce made for each response.
import { randomBytes } from 'node:crypto';

export interface HtmlPage {
  status: number;
  html: string;
  csp: string;
}

/** Text or an attribute value as HTML: the five characters that could open markup are escaped. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export interface HtmlPageOptions {
  status: number;
  /** The document title (escaped here). */
  title: string;
  /** The page's one style sheet. */
  style: string;
  /** The body's markup, already escaped where it holds values. */
  body: string;
  /**
   * Whether forms may post to this server only (`form-action 'self'`). A page whose form answer is a
   * redirect elsewhere (the OAuth consent redirects to the client) leaves it out: browsers apply
   * form-action to the redirect after the post too.
   */
  formsToSelfOnly: boolean;
}

export function htmlPage(options: HtmlPageOptions): HtmlPage {
  const nonce = randomBytes(16).toString('base64');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(options.title)}</title>
<style nonce="${nonce}">${options.style}</style>
</head>
<body>
${options.body}
</body>
</html>
`;
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    "img-src 'none'",
    "script-src 'none'",
    ...(options.formsToSelfOnly ? ["form-action 'self'"] : []),
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { status: options.status, html, csp };
}

/** The page as a response: never cached, never indexed, never framed. */
export function htmlResponse(page: HtmlPage, headers: Record<string, string> = {}): Response {
  return new Response(page.html, {
    status: page.status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': page.csp,
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'x-robots-tag': 'noindex, nofollow',
      ...headers,
    },
  });
}
