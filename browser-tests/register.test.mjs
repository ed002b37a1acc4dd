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

  outcome = await write(page, '0', 'zero');
  assert.equal(outcome.kind, 'rejected', outcome.text);
  assert.match(outcome.text, /positive integer token required/);
  assert.equal(await text(page, '#current-value'), 'replacement');

  outcome = await write(page, '8', 'same owner again');
  assert.equal(outcome.kind, 'applied', outcome.text);
  assert.equal(await text(page, '#current-value'), 'same owner again');
  assert.equal(await text(page, '#highest'), '8');
  assert.notEqual(await text(page, '#revision'), revisionAfterFirst);

  const history = page.locator('[data-testid="attempt"]');
  assert.equal(await history.count(), 4);
  assert.deepEqual(
    await history.evaluateAll((items) => items.map((li) => li.dataset.kind)),
    ['applied', 'rejected', 'rejected', 'applied'],
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

test('malformed tokens show the typed error and leave the register alone', async () => {
  const { page, problems } = await openPage('/');
  await write(page, '5', 'kept');
  for (const bad of ['-3', 'abc', '7.5', '', '99999999999999999999']) {
    const outcome = await write(page, bad, 'nope');
    assert.equal(outcome.kind, 'rejected', `${bad}: ${outcome.text}`);
    assert.match(outcome.text, /positive integer token required/, bad);
    assert.equal(await text(page, '#current-value'), 'kept');
    assert.equal(await text(page, '#highest'), '5');
  }
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
