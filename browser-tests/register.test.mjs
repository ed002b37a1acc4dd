// Browser tests for the built page in dist/: headless Debian Chromium driven by playwright-core.
// Build first (`trunk build --release --offline`), then run `node --test` in this folder.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveStatic } from './static-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const DIST = resolve(here, '..', 'dist');
const SCREENSHOTS = join(here, 'screenshots');
const NESTED = '/docs/deep/fencelab/';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let server;
let context;
let userDataDir;

before(async () => {
  assert.ok(
    existsSync(join(DIST, 'index.html')),
    `no ${DIST}/index.html: run \`trunk build --release --offline\` first`,
  );
  server = await serveStatic(DIST, ['/', NESTED]);
  userDataDir = await mkdtemp(join(tmpdir(), 'fencelab-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1100, height: 900 },
  });
  await mkdir(SCREENSHOTS, { recursive: true });
});

after(async () => {
  await context?.close();
  await server?.close();
  if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
});

/** Opens the page at `path` and records everything that would mean it is broken. */
async function openPage(path) {
  const page = await context.newPage();
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  await page.goto(server.origin + path);
  // The wasm app has started once the form is on screen.
  await page.locator('#write').waitFor({ state: 'visible', timeout: 20_000 });
  return { page, problems };
}

const text = async (page, selector) => (await page.locator(selector).textContent())?.trim();

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
  assert.equal(await page.title(), 'Fencelab · a fenced register');
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
  await page.screenshot({ path: join(SCREENSHOTS, 'rejected.png'), animations: 'disabled' });
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
  const assets = server.requests.filter(([, url]) => /\.(js|wasm|css)$/.test(url.split('?')[0]));
  const nested = assets.filter(([, url]) => url.startsWith(NESTED));
  assert.ok(nested.length >= 3, `expected js, wasm and css under ${NESTED}, got ${JSON.stringify(assets)}`);
  assert.ok(nested.every(([status]) => status === 200), JSON.stringify(nested));

  assert.deepEqual(problems, []);
  await page.close();
});
