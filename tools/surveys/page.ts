// The public survey form as HTML (core/html-page.ts: one escaping rule, no script, the strict CSP,
// forms posting to this server only). One plain <form method="post"> works without JavaScript:
// radios 0-10 for an NPS question, radios min..max for a rating, radios for one choice, checkboxes
// for several (named `answers.<id>.<n>`, since a form body keeps one value per name), a textarea for
// text, and an e-mail field (required when the survey takes one response per e-mail). After a
// refused answer the form comes back with each error next to its field and the values kept.
import { escapeHtml, type HtmlPage, htmlPage } from '../../core/html-page.ts';
import { MAX_TEXT_ANSWER, scoresOf } from './questions.ts';
import type { StoredQuestion, SurveyRow } from './tables.ts';

const STYLE = `
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1f2933;line-height:1.5}
h1{font-size:1.8rem;margin-bottom:.25rem}
.description{color:#52606d}
fieldset{border:1px solid #d9e2ec;border-radius:6px;padding:1rem;margin:1rem 0}
legend{font-weight:600;padding:0 .3rem}
.req{color:#c81e1e;margin-left:.2rem}
.choices label{display:inline-block;margin:.2rem .8rem .2rem 0}
.choices.list label{display:block}
.scale{display:flex;flex-wrap:wrap;gap:.3rem}
.scale label{border:1px solid #d9e2ec;border-radius:4px;padding:.2rem .5rem}
textarea,input[type=email]{width:100%;padding:.4rem;box-sizing:border-box;font:inherit}
.error{color:#c81e1e;margin:.3rem 0 0}
.notice{background:#f0f4f8;border-radius:6px;padding:1rem}
button{margin-top:.8rem;padding:.5rem 1.2rem;font:inherit;cursor:pointer}
`;

function layout(status: number, title: string, body: string): HtmlPage {
  return htmlPage({ status, title, style: STYLE, body, formsToSelfOnly: true });
}

/** What a refused form brings back: the values sent and the error of each field (`answers.<id>`, `email`). */
export interface FormState {
  answers: Readonly<Record<string, unknown>>;
  email: string;
  errors: ReadonlyMap<string, string>;
}

const EMPTY: FormState = { answers: {}, email: '', errors: new Map() };

function errorOf(state: FormState, field: string, id: string): string {
  const message = state.errors.get(field);
  return message === undefined ? '' : `\n<p class="error" id="${id}">${escapeHtml(message)}</p>`;
}

const checked = (on: boolean) => (on ? ' checked' : '');

function radios(
  q: StoredQuestion,
  values: readonly string[],
  labels: readonly string[],
  current: unknown,
): string {
  const required = q.required ? ' required' : '';
  return values
    .map((value, i) => {
      const id = `q-${q.id}-${i}`;
      return `<label for="${id}"><input type="radio" id="${id}" name="answers.${q.id}" value="${escapeHtml(value)}"${required}${checked(
        String(current) === value,
      )}> ${escapeHtml(labels[i] ?? value)}</label>`;
    })
    .join('\n');
}

function inputsOf(q: StoredQuestion, current: unknown): string {
  switch (q.type) {
    case 'nps':
    case 'rating': {
      const scores = scoresOf(q).map(String);
      const hint =
        q.type === 'nps'
          ? '<p class="description">0 = not at all likely, 10 = extremely likely</p>'
          : `<p class="description">${scores[0]} = lowest, ${scores[scores.length - 1]} = highest</p>`;
      return `${hint}\n<div class="choices scale">\n${radios(q, scores, scores, current)}\n</div>`;
    }
    case 'single_choice': {
      const options = q.options ?? [];
      return `<div class="choices list">\n${radios(q, options, options, current)}\n</div>`;
    }
    case 'multiple_choice': {
      const ticked = Array.isArray(current) ? current : [];
      const boxes = (q.options ?? [])
        .map((option, i) => {
          const id = `q-${q.id}-${i}`;
          return `<label for="${id}"><input type="checkbox" id="${id}" name="answers.${q.id}.${i}" value="${escapeHtml(option)}"${checked(
            ticked.includes(option),
          )}> ${escapeHtml(option)}</label>`;
        })
        .join('\n');
      return `<div class="choices list">\n${boxes}\n</div>`;
    }
    case 'text':
      return `<textarea id="q-${q.id}" name="answers.${q.id}" rows="4" maxlength="${MAX_TEXT_ANSWER}"${
        q.required ? ' required' : ''
      } aria-labelledby="label-${q.id}">${escapeHtml(typeof current === 'string' ? current : '')}</textarea>`;
  }
}

function questionHtml(q: StoredQuestion, state: FormState): string {
  const mark = q.required ? '<span class="req" title="required">*</span>' : '';
  return `<fieldset id="question-${q.id}" data-type="${q.type}">
<legend id="label-${q.id}">${escapeHtml(q.text)}${mark}</legend>
${inputsOf(q, Object.hasOwn(state.answers, q.id) ? state.answers[q.id] : undefined)}${errorOf(state, `answers.${q.id}`, `error-${q.id}`)}
</fieldset>`;
}

function emailHtml(survey: SurveyRow, state: FormState): string {
  const required = survey.onePerEmail;
  return `<fieldset id="question-email">
<legend><label for="email">Your e-mail${required ? '<span class="req" title="required">*</span>' : ' (optional)'}</label></legend>
<input type="email" id="email" name="email" maxlength="320" autocomplete="email" value="${escapeHtml(state.email)}"${
    required ? ' required' : ''
  }>${errorOf(state, 'email', 'error-email')}
</fieldset>`;
}

/** The form of an active survey; `state` refills it after a refused answer (then with `status` 400 or 409). */
export function surveyFormPage(
  survey: SurveyRow,
  action: string,
  state: FormState = EMPTY,
  status = 200,
): HtmlPage {
  const description = survey.description
    ? `<p class="description">${escapeHtml(survey.description)}</p>`
    : '';
  // Errors of no field on the form (a field the form never had) are listed with the notice.
  const shown = new Set(['email', ...survey.questions.map((q) => `answers.${q.id}`)]);
  const others = [...state.errors].filter(([field]) => !shown.has(field));
  const problem =
    state.errors.size > 0
      ? `<p class="notice error" id="form-error">Please check the answers marked below.${others
          .map(([field, message]) => ` ${escapeHtml(`${field} ${message}.`)}`)
          .join('')}</p>`
      : '';
  const body = `<main>
<h1>${escapeHtml(survey.name)}</h1>
${description}
${problem}
<form method="post" action="${escapeHtml(action)}" id="survey-form">
${survey.questions.map((q) => questionHtml(q, state)).join('\n')}
${emailHtml(survey, state)}
<p class="description"><span class="req">*</span> required</p>
<button type="submit" id="submit">Send</button>
</form>
</main>`;
  return layout(status, survey.name, body);
}

export function messagePage(status: number, heading: string, text: string): HtmlPage {
  return layout(
    status,
    heading,
    `<main>\n<h1>${escapeHtml(heading)}</h1>\n<p class="notice" id="message">${escapeHtml(text)}</p>\n</main>`,
  );
}

export const DEFAULT_THANK_YOU = 'Thank you for your response.';

export const thankYouPage = (survey: SurveyRow): HtmlPage =>
  messagePage(200, 'Thank you', survey.thankYouMessage ?? DEFAULT_THANK_YOU);

export const closedPage = (survey: SurveyRow, status: number): HtmlPage =>
  messagePage(status, survey.name, 'This survey is closed and no longer takes responses.');

export const notFoundPage = (): HtmlPage =>
  messagePage(404, 'Not found', 'This link is not valid. Ask the sender for a new one.');
