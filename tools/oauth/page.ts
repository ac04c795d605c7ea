// The authorization pages as plain server-rendered HTML (no script): the sign-in form, the consent
// form (organization, app and where its details came from, each scope in plain words and the
// toolsets, both narrowable by checkbox, Allow and Deny) and the error page shown when no trusted
// redirect URI is known. Every value is escaped; one inline style sheet is allowed by a nonce. The
// CSP names no form-action: browsers apply it to the redirect after a form post, and the consent's
// answer is a redirect to the client.
import { escapeHtml, type HtmlPage, htmlPage } from '../../core/html-page.ts';

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}fieldset{border:1px solid #ccc;margin:1rem 0;padding:.5rem 1rem}
label{display:block;margin:.4rem 0}input[type=email],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
.error{color:#a00;font-weight:600}.muted{color:#666;font-size:.9rem}button{padding:.5rem 1.2rem;margin-right:.5rem}`;

function layout(status: number, title: string, body: string): HtmlPage {
  // No form-action: the consent's answer is a redirect to the client, which browsers check against it.
  return htmlPage({
    status,
    title,
    style: STYLE,
    body: `<h1>${escapeHtml(title)}</h1>\n${body}`,
    formsToSelfOnly: false,
  });
}

export function errorPage(status: number, message: string): HtmlPage {
  return layout(
    status,
    'Authorization failed',
    `<p class="error">${escapeHtml(message)}</p><p class="muted">Go back to the app and start again. You were not sent back to it because the request could not be trusted.</p>`,
  );
}

/** What both forms show about the request. */
export interface ClientView {
  name: string;
  source: string;
  redirectHost: string;
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
}

function clientLines(client: ClientView): string {
  return `<p><strong>${escapeHtml(client.name)}</strong> asks to connect to your CRM account.</p>
<p class="muted">Its details come from ${escapeHtml(client.source)}. After your answer you are sent back to ${escapeHtml(client.redirectHost)}.</p>`;
}

export function signInPage(
  client: ClientView,
  form: { action: string; handle: string; csrf: string; email?: string; error?: string },
  status = 200,
): HtmlPage {
  const error = form.error ? `<p class="error" role="alert">${escapeHtml(form.error)}</p>` : '';
  return layout(
    status,
    'Sign in to continue',
    `${clientLines(client)}
${error}
<form method="post" action="${escapeHtml(form.action)}">
${hidden({ step: 'signin', handle: form.handle, csrf: form.csrf })}
<label>Email <input type="email" name="email" autocomplete="username" required value="${escapeHtml(form.email ?? '')}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>`,
  );
}

export interface ConsentChoice {
  name: string;
  label: string;
  checked: boolean;
}

export function consentPage(
  client: ClientView,
  form: {
    action: string;
    handle: string;
    csrf: string;
    organization: string;
    user: string;
    resource: string;
    scopes: ConsentChoice[];
    toolsets: ConsentChoice[];
    error?: string;
  },
  status = 200,
): HtmlPage {
  const error = form.error ? `<p class="error" role="alert">${escapeHtml(form.error)}</p>` : '';
  const boxes = (prefix: string, choices: ConsentChoice[]) =>
    choices
      .map(
        (c) =>
          `<label><input type="checkbox" name="${prefix}:${escapeHtml(c.name)}" value="on"${c.checked ? ' checked' : ''}> ${escapeHtml(c.label)} <span class="muted">(${escapeHtml(c.name)})</span></label>`,
      )
      .join('\n');
  const toolsets =
    form.toolsets.length > 0
      ? `<fieldset><legend>Tool groups the assistant lists (none checked: the default, core)</legend>
${boxes('toolset', form.toolsets)}
</fieldset>`
      : '';
  return layout(
    status,
    `Allow ${client.name} to access ${form.organization}?`,
    `${clientLines(client)}
<p>Signed in as <strong>${escapeHtml(form.user)}</strong> of <strong>${escapeHtml(form.organization)}</strong>. The app acts as you, never beyond your role, at ${escapeHtml(form.resource)}.</p>
${error}
<form method="post" action="${escapeHtml(form.action)}">
${hidden({ step: 'consent', handle: form.handle, csrf: form.csrf })}
<fieldset><legend>It may (uncheck what you do not want to allow)</legend>
${boxes('scope', form.scopes)}
</fieldset>
${toolsets}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}
