// The page a person reaches from the reset mail, as plain server-rendered HTML (core/html-page.ts:
// no script, one nonce'd style sheet, the strict CSP, forms posting to this server only): the form
// for the new password (twice), the same form again with what was wrong, the page saying the link
// is invalid or expired (request a new one), and the success page.
import { escapeHtml, type HtmlPage, htmlPage } from '../../core/html-page.ts';

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}label{display:block;margin:.6rem 0}input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
.error{color:#a00;font-weight:600}.muted{color:#666;font-size:.9rem}button{padding:.5rem 1.2rem;margin-top:.6rem}`;

export const PAGE_PATH = '/reset-password';

function layout(status: number, title: string, body: string): HtmlPage {
  return htmlPage({
    status,
    title,
    style: STYLE,
    body: `<h1 id="title">${escapeHtml(title)}</h1>\n${body}`,
    formsToSelfOnly: true,
  });
}

/** The form; the token travels in a hidden field, never in the form's action. */
export function resetFormPage(token: string, error?: string, status = 200): HtmlPage {
  const alert = error ? `<p class="error" id="error" role="alert">${escapeHtml(error)}</p>` : '';
  return layout(
    status,
    'Choose a new password',
    `${alert}
<form method="post" action="${PAGE_PATH}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<label>New password <input type="password" id="password" name="password" autocomplete="new-password" minlength="8" maxlength="200" required></label>
<label>New password again <input type="password" id="password_confirm" name="password_confirm" autocomplete="new-password" minlength="8" maxlength="200" required></label>
<button type="submit" id="submit">Set the new password</button>
</form>
<p class="muted">8 to 200 characters. Every session of yours is signed out once it is set.</p>`,
  );
}

export function invalidLinkPage(): HtmlPage {
  return layout(
    404,
    'This link no longer works',
    '<p id="message">The link is invalid, was used already, or is more than an hour old. Request a new password reset and use the link of the new mail.</p>',
  );
}

export function successPage(): HtmlPage {
  return layout(
    200,
    'Password changed',
    '<p id="message">Your password has been changed. Sign in with the new one; every other session of yours was signed out.</p>',
  );
}
