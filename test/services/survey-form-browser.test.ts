// Locks in that a person can answer a survey in a real browser (Debian chromium, headless), with JavaScript on and with it off: the form from public_url renders under its strict CSP without errors, every question type is filled and sent by the plain HTML form, the thank-you message shows, a refused answer comes back next to its field with the values kept, and the API then reads the response.

import type { BrowserContext } from 'playwright-core';
import { describe, expect } from 'vitest';
import { fileTest, readOutput, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';
import { launchChromiumForFile, serveAppForFile } from '../support/browser.ts';
import { activeSurvey } from '../surveys/helpers.ts';

// The file's app served on a local port, a chromium with script on and one with script off.
const test = fileTest({ plan: 'pro', options: { withoutRateLimits: true } })
  .extend('origin', { scope: 'file' }, serveAppForFile)
  .extend('browser', { scope: 'file' }, launchChromiumForFile('crm-survey-js-', { width: 900, height: 1400 }))
  .extend(
    'noScript',
    { scope: 'file' },
    launchChromiumForFile('crm-survey-nojs-', { width: 900, height: 1400 }, { javaScriptEnabled: false }),
  );
// Both browsers and the app start in a hook with its own minute, not inside the first test's.
test.beforeAll(async ({ origin, browser, noScript }) => {
  expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(browser.pages()).toBeDefined();
  expect(noScript.pages()).toBeDefined();
}, 60_000);

async function responsesOf(t: TestContext, org: TestOrg, surveyId: string) {
  const res = await t.request('GET', `/api/v1/surveys/${surveyId}/responses`, { token: org.token });
  return (await readOutput(res, TOOL.list_survey_responses)).responses;
}

/** Opens the form, fills one answer of each type and sends it; answers the problems the page reported. */
async function fillAndSend(context: BrowserContext, origin: string, url: string): Promise<string[]> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(origin)) problems.push(`request outside the app: ${request.url()}`);
  });
  const response = await page.goto(url, { waitUntil: 'load' });
  expect(response?.status()).toBe(200);
  await expect(page.locator('h1').textContent()).resolves.toBe('Browser survey');
  // The nonce'd style sheet applies: the body is centred, not full width.
  expect(await page.evaluate(() => document.body.getBoundingClientRect().width)).toBeLessThan(800);
  await page.check('#q-nps-9'); // 9
  await page.check('#q-stars-3'); // 4 of 1-5
  await page.check('#q-plan-2'); // Max
  await page.check('#q-used-0');
  await page.check('#q-used-2');
  await page.fill('#q-why', 'Typed in a browser');
  await page.fill('#email', 'browser@example.test');
  await Promise.all([page.waitForLoadState('load'), page.click('#submit')]);
  await page.waitForSelector('#message');
  await expect(page.locator('h1').textContent()).resolves.toBe('Thank you');
  await expect(page.locator('#message').textContent()).resolves.toBe('Thanks from the browser test');
  await page.close();
  return problems;
}

describe('the public survey form in Chromium', () => {
  test('is answered with JavaScript on', async ({ t, org, browser, origin }) => {
    const { survey, path } = await activeSurvey(t, org, {
      name: 'Browser survey',
      thank_you_message: 'Thanks from the browser test',
    });
    expect(await fillAndSend(browser, origin, `${origin}${path}`)).toEqual([]);
    const [response] = await responsesOf(t, org, survey._id);
    expect(response).toMatchObject({
      answers: { nps: 9, stars: 4, plan: 'Max', used: ['Leads', 'Surveys'], why: 'Typed in a browser' },
      email: 'browser@example.test',
    });
  });

  test('is answered with JavaScript off', async ({ t, org, noScript, origin }) => {
    // Script really is off in this browser: an inline script does not run.
    const probe = await noScript.newPage();
    await probe.goto('data:text/html,<title>before</title><script>document.title="ran"</script>');
    await expect(probe.title()).resolves.toBe('before');
    await probe.close();

    const { survey, path } = await activeSurvey(t, org, {
      name: 'Browser survey',
      thank_you_message: 'Thanks from the browser test',
    });
    expect(await fillAndSend(noScript, origin, `${origin}${path}`)).toEqual([]);
    expect((await responsesOf(t, org, survey._id))[0]?.answers).toMatchObject({
      nps: 9,
      used: ['Leads', 'Surveys'],
    });
  });

  test('shows a refused answer next to its field with the values kept, then takes the corrected form (no JavaScript)', async ({
    t,
    org,
    noScript,
    origin,
  }) => {
    const { survey, path } = await activeSurvey(t, org, {
      name: 'Browser survey',
      thank_you_message: 'Thanks from the browser test',
    });
    const page = await noScript.newPage();
    await page.goto(`${origin}${path}`, { waitUntil: 'load' });
    // Everything but the required multiple choice (checkboxes carry no `required`: the server says it).
    await page.check('#q-nps-10');
    await page.check('#q-stars-4');
    await page.check('#q-plan-0');
    await page.fill('#q-why', 'Kept across the round trip');
    await Promise.all([page.waitForLoadState('load'), page.click('#submit')]);
    await expect(page.locator('#error-used').textContent()).resolves.toBe(
      'is required: tick at least one option',
    );
    await expect(page.locator('#form-error').isVisible()).resolves.toBe(true);
    await expect(page.isChecked('#q-nps-10')).resolves.toBe(true);
    await expect(page.isChecked('#q-plan-0')).resolves.toBe(true);
    await expect(page.inputValue('#q-why')).resolves.toBe('Kept across the round trip');
    expect(await responsesOf(t, org, survey._id)).toEqual([]);

    await page.check('#q-used-1');
    await Promise.all([page.waitForLoadState('load'), page.click('#submit')]);
    await page.waitForSelector('#message');
    await expect(page.locator('#message').textContent()).resolves.toBe('Thanks from the browser test');
    await page.close();
    const [response] = await responsesOf(t, org, survey._id);
    expect(response?.answers).toEqual({
      nps: 10,
      stars: 5,
      plan: 'Basic',
      used: ['Invoices'],
      why: 'Kept across the round trip',
    });
  });
});
