// The public proposal page as HTML: the sections' Markdown rendered safely (markdown-it with raw
// HTML off, links only http(s)/mailto, no images), every other value escaped, plain HTML forms to
// accept or decline (no script at all), one inline style sheet allowed by a per-response nonce, and
// the strict Content-Security-Policy the response must carry. The page names both parties (the
// sending organization, the client lead and its contact) and prints money exactly as the PDFs and
// mails do (core/money.ts formatAmount: "USD 48,000.00"), each line with its tax.
import MarkdownIt from 'markdown-it';
import { escapeHtml, type HtmlPage, htmlPage } from '../../core/html-page.ts';
import { formatAmount } from '../../core/money.ts';
import type { ProposalRecord } from './store.ts';

const SAFE_LINK = /^(https?:|mailto:)/i;

/**
 * Markdown without raw HTML (`html: false` escapes it as text), without autolinked bare text, and
 * with links validated twice: markdown-it's own validateLink (no javascript:, vbscript:, file:,
 * data:) narrowed to http(s) and mailto. Images are off: a proposal page loads nothing external,
 * and a data: URL never becomes an image.
 */
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });
const defaultValidate = markdown.validateLink.bind(markdown);
markdown.validateLink = (url: string): boolean => defaultValidate(url) && SAFE_LINK.test(url.trim());
markdown.disable('image');
const defaultLinkOpen =
  markdown.renderer.rules.link_open ??
  ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
markdown.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  const href = String(token?.attrGet('href') ?? '');
  // Belt and braces: whatever reached here must still be an http(s) or mailto link.
  if (token && !SAFE_LINK.test(href.trim())) token.attrSet('href', '#');
  token?.attrSet('rel', 'nofollow noopener noreferrer');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

function renderMarkdown(source: string): string {
  return markdown.render(source);
}

const STYLE = `
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1f2933;line-height:1.5}
h1{font-size:1.8rem;margin-bottom:.25rem}
.meta{color:#52606d;margin-top:0}
section{margin:1.5rem 0}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{border-bottom:1px solid #d9e2ec;padding:.4rem;text-align:left}
td.n,th.n{text-align:right}
tfoot td{font-weight:600}
form{border:1px solid #d9e2ec;border-radius:6px;padding:1rem;margin:1rem 0}
label{display:block;margin:.5rem 0 .2rem}
input,textarea{width:100%;padding:.4rem;box-sizing:border-box;font:inherit}
button{margin-top:.8rem;padding:.5rem 1.2rem;font:inherit;cursor:pointer}
.notice{background:#f0f4f8;border-radius:6px;padding:1rem}
`;

function layout(status: number, title: string, body: string): HtmlPage {
  return htmlPage({ status, title, style: STYLE, body, formsToSelfOnly: true });
}

/** An amount as every document prints it ("USD 48,000.00"); an unpriced figure prints nothing. */
function money(value: number | null, currency: string | null): string {
  if (value === null || currency === null) return '';
  return escapeHtml(formatAmount(value, currency));
}

/** A percent as typed (8.875), empty when none applies. */
function percent(value: number | undefined): string {
  return value ? `${escapeHtml(String(value))}%` : '';
}

function linesTable(p: ProposalRecord): string {
  if (p.line_items.length === 0) return '';
  const discounts = p.line_items.some((l) => (l.discount_percent ?? 0) > 0);
  const rows = p.line_items
    .map(
      (l) =>
        `<tr><td>${escapeHtml(l.description)}</td><td class="n">${escapeHtml(String(l.quantity))}</td>` +
        `<td class="n">${money(l.unit_price, p.currency)}</td>` +
        (discounts ? `<td class="n">${percent(l.discount_percent)}</td>` : '') +
        `<td class="n">${percent(l.tax_percent)}</td><td class="n">${money(l.tax_amount, p.currency)}</td>` +
        `<td class="n">${money(l.amount, p.currency)}</td></tr>`,
    )
    .join('\n');
  const span = discounts ? 6 : 5;
  return `<h2>Pricing</h2>
<table>
<thead><tr><th>Item</th><th class="n">Qty</th><th class="n">Unit price</th>${
    discounts ? '<th class="n">Discount</th>' : ''
  }<th class="n">Tax rate</th><th class="n">Tax</th><th class="n">Amount</th></tr></thead>
<tbody>
${rows}
</tbody>
<tfoot>
<tr><td colspan="${span}">Subtotal</td><td class="n" id="subtotal">${money(p.subtotal, p.currency)}</td></tr>
<tr><td colspan="${span}">Tax</td><td class="n" id="tax">${money(p.tax_total, p.currency)}</td></tr>
<tr><td colspan="${span}">Total</td><td class="n" id="total">${money(p.total, p.currency)}</td></tr>
</tfoot>
</table>`;
}

/** Who the proposal is from and to, as the PDFs name them (tools/documents/parties.ts). */
export interface ProposalParties {
  /** The sending organization. */
  from: string;
  /** The client: the lead's name. */
  to: string;
  /** The contact it is addressed to, when the lead has one with an e-mail. */
  attention: string | null;
}

function partiesHtml(parties: ProposalParties): string {
  const attention = parties.attention
    ? ` <span id="attention">(attn. ${escapeHtml(parties.attention)})</span>`
    : '';
  return `<p class="meta" id="parties">From <strong id="from">${escapeHtml(parties.from)}</strong> to <strong id="to">${escapeHtml(parties.to)}</strong>${attention}</p>`;
}

function sectionsHtml(p: ProposalRecord): string {
  return p.sections
    .map((s) => `<section>\n<h2>${escapeHtml(s.heading)}</h2>\n${renderMarkdown(s.body_markdown)}</section>`)
    .join('\n');
}

function answerForms(action: string): string {
  return `<form method="post" action="${escapeHtml(action)}/accept" id="accept-form">
<h2>Accept this proposal</h2>
<label for="name">Your name</label>
<input id="name" name="name" required maxlength="200" autocomplete="name">
<label for="email">Your e-mail</label>
<input id="email" name="email" type="email" required maxlength="320" autocomplete="email">
<label for="signature">Signature (type your full name to sign)</label>
<input id="signature" name="signature" maxlength="200">
<button type="submit" id="accept">Accept</button>
</form>
<form method="post" action="${escapeHtml(action)}/decline" id="decline-form">
<h2>Decline</h2>
<label for="reason">Reason (optional)</label>
<textarea id="reason" name="reason" rows="3" maxlength="2000"></textarea>
<button type="submit" id="decline">Decline</button>
</form>`;
}

function stateNotice(p: ProposalRecord): string {
  if (p.status === 'accepted' && p.accepted_by) {
    return `<p class="notice" id="state">Accepted by ${escapeHtml(p.accepted_by.name)} on ${escapeHtml(
      (p.accepted_at ?? '').slice(0, 10),
    )}.</p>`;
  }
  if (p.status === 'declined') return '<p class="notice" id="state">This proposal was declined.</p>';
  return '';
}

/** The proposal as its recipient sees it; the answer forms only while it is open (sent). */
export function proposalPage(p: ProposalRecord, parties: ProposalParties, action: string): HtmlPage {
  const validity = p.valid_until ? `<p class="meta">Valid until ${escapeHtml(p.valid_until)}</p>` : '';
  const body = `<main>
<h1>${escapeHtml(p.title)}</h1>
${partiesHtml(parties)}
${validity}
${sectionsHtml(p)}
${linesTable(p)}
${p.status === 'sent' ? answerForms(action) : stateNotice(p)}
</main>`;
  return layout(200, p.title, body);
}

export function messagePage(status: number, heading: string, text: string): HtmlPage {
  return layout(
    status,
    heading,
    `<main>\n<h1>${escapeHtml(heading)}</h1>\n<p class="notice" id="message">${escapeHtml(text)}</p>\n</main>`,
  );
}

export const notFoundPage = (): HtmlPage =>
  messagePage(404, 'Not found', 'This link is not valid. Ask the sender for a new one.');
