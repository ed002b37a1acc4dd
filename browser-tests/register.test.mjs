// Browser tests for the built page in dist/: headless Debian Chromium driven by playwright-core.
// Build first (`trunk build --release --offline`), then run `node --test` in this folder.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SCREENSHOTS, launch, openPage as open, text } from './harness.mjs';

const NESTED = '/docs/deep/fencelab/';

let env;

before(async () => {
  env = await launch(['/', NESTED], { width: 1100, height: 900 });
});

after(async () => {
  await env?.close();
});

/** Opens the page at `path`, switches to the register playground tab and waits for its form. */
async function openPage(path) {
  const { page, problems } = await open(env, path);
  await page.click('#tab-playground');
  await page.locator('#write').waitFor({ state: 'visible', timeout: 5_000 });
  return { page, problems };
}

/** Fills the form, presses Write and waits until the outcome shows this attempt. */
async function write(page, generation, value) {
  const before = Number(await text(page, '[data-testid="attempt-count"]'));
  await page.fill('#generation', generation);
  await page.fill('#value', value);
  await page.click('#write');
  await page.waitForFunction(
    (n) => document.querySelector('#outcome h2')?.textContent.includes(`(attempt ${n})`),
    before + 1,
    { timeout: 5_000 },
  );
  return {
    kind: await page.locator('#outcome').getAttribute('data-kind'),
    text: await text(page, '#outcome'),
  };
}

test('stale owners are fenced off; the current owner can write again', async () => {
  const { page, problems } = await openPage('/');
  assert.equal(await page.title(), 'Fencelab · fencing tokens, step by step');
  assert.equal(await text(page, '#highest'), 'none');
  assert.equal(await page.locator('#outcome').getAttribute('data-kind'), 'none');

  let outcome = await write(page, '8', 'replacement');
  assert.equal(outcome.kind, 'applied', outcome.text);
  assert.equal(await text(page, '#highest'), '8');
  assert.equal(await text(page, '#current-value'), 'replacement');
  const revisionAfterFirst = await text(page, '#revision');

  // The outcome is highlighted briefly, and a gloo-timers Timeout takes the highlight away.
  assert.match(await page.locator('#outcome').getAttribute('class'), /\bflash\b/);
  await page.waitForFunction(() => !document.querySelector('#outcome').classList.contains('flash'), null, {
    timeout: 5_000,
  });

  outcome = await write(page, '7', 'stale');
  assert.equal(outcome.kind, 'rejected', outcome.text);
  assert.match(outcome.text, /stale owner/);
  await page.screenshot({ path: join(SCREENSHOTS, 'register-rejected.png'), animations: 'disabled' });
  assert.equal(await text(page, '#current-value'), 'replacement');
  assert.equal(await text(page, '#highest'), '8');
  assert.equal(await text(page, '#revision'), revisionAfterFirst);

  outcome = await write(page, '8', 'same owner again');
  assert.equal(outcome.kind, 'applied', outcome.text);
  assert.equal(await text(page, '#current-value'), 'same owner again');
  assert.equal(await text(page, '#highest'), '8');
  assert.notEqual(await text(page, '#revision'), revisionAfterFirst);

  const history = page.locator('[data-testid="attempt"]');
  assert.equal(await history.count(), 3);
  assert.deepEqual(
    await history.evaluateAll((items) => items.map((li) => li.dataset.kind)),
    ['applied', 'rejected', 'applied'],
  );

  await page.waitForFunction(() => !document.querySelector('#outcome').classList.contains('flash'));
  const shot = { fullPage: true, animations: 'disabled' };
  await page.screenshot({ ...shot, path: join(SCREENSHOTS, 'register.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ ...shot, path: join(SCREENSHOTS, 'register-dark.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ ...shot, path: join(SCREENSHOTS, 'register-narrow-dark.png') });

  assert.deepEqual(problems, []);
  await page.close();
});

test('text that is no token is an input error on the field, not a rejection by the register', async () => {
  const { page, problems } = await openPage('/');
  await write(page, '5', 'kept');
  const field = page.locator('#generation');
  const outcome = await text(page, '#outcome');
  for (const [bad, message] of [
    ['abc', '“abc” is not a token: a token is a positive whole number, like 1, 2 or 3.'],
    ['0', '“0” is not a token: a token is a positive whole number, like 1, 2 or 3.'],
    ['-3', '“-3” is not a token'],
    ['7.5', '“7.5” is not a token'],
    ['', 'Type a token: a token is a positive whole number'],
    ['99999999999999999999', 'is too large: the largest token is 18446744073709551615'],
  ]) {
    await field.fill(bad);
    await page.click('#write');
    const error = page.locator('#generation-error');
    await error.waitFor();
    assert.ok((await error.textContent()).includes(message), `${bad}: ${await error.textContent()}`);
    assert.equal(await error.getAttribute('role'), 'alert');
    assert.equal(await field.getAttribute('aria-invalid'), 'true', bad);
    assert.equal(await field.getAttribute('aria-describedby'), 'generation-error');
    // The focus is on the field to fix.
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'generation');
    // Nothing reached the register: no attempt, no rejection, the same outcome and state.
    assert.equal(await text(page, '[data-testid="attempt-count"]'), '1');
    assert.equal(await page.locator('[data-testid="attempt"]').count(), 1);
    assert.equal(await page.locator('[data-testid="attempt"][data-kind="rejected"]').count(), 0);
    assert.equal(await text(page, '#outcome'), outcome);
    assert.equal(await text(page, '#current-value'), 'kept');
    assert.equal(await text(page, '#highest'), '5');
  }
  await page.screenshot({ path: join(SCREENSHOTS, 'register-input-error.png'), animations: 'disabled' });
  // Editing the field clears the error; a token is written as usual.
  await field.fill('6');
  assert.equal(await field.getAttribute('aria-invalid'), null);
  assert.equal(await page.locator('#generation-error').count(), 0);
  const written = await write(page, '6', 'fixed');
  assert.equal(written.kind, 'applied', written.text);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the page works from a nested sub-path', async () => {
  const { page, problems } = await openPage(NESTED);
  const outcome = await write(page, '3', 'from a sub-path');
  assert.equal(outcome.kind, 'applied', outcome.text);
  assert.equal(await text(page, '#current-value'), 'from a sub-path');

  // Every asset came from under the sub-path: the build uses relative URLs.
  const assets = env.server.requests.filter(([, url]) => /\.(js|wasm|css)$/.test(url.split('?')[0]));
  const nested = assets.filter(([, url]) => url.startsWith(NESTED));
  assert.ok(nested.length >= 3, `expected js, wasm and css under ${NESTED}, got ${JSON.stringify(assets)}`);
  assert.ok(nested.every(([status]) => status === 200), JSON.stringify(nested));

  assert.deepEqual(problems, []);
  await page.close();
});
