// Shared set-up for the browser tests and the benchmark: serve dist/ on 127.0.0.1, launch the
// system Chromium headless with a fresh profile, and record anything that means the page broke.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveStatic } from './static-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
/** The two widths every screenshot is taken at: a small phone and a desktop. */
export const PHONE = { width: 360, height: 780 };
export const DESKTOP = { width: 1440, height: 900 };

export const DIST = resolve(process.env.FENCELAB_DIST ?? join(here, '..', 'dist'));
/** Where the tests save their screenshots (gitignored; documented in the README). */
export const SCREENSHOTS = join(here, 'screenshots');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Starts the server and the browser. `prefixes` are the URL paths dist/ is mounted at; `extra`
 * mounts other folders (see `serveStatic`); `options` are more of the browser context's options
 * (a touch screen: `{ hasTouch: true, isMobile: true }`).
 */
export async function launch(prefixes = ['/'], viewport = { width: 1440, height: 900 }, extra = {}, { cache, ...options } = {}) {
  assert.ok(
    existsSync(join(DIST, 'index.html')),
    `no ${DIST}/index.html: run \`trunk build --release --offline\` first`,
  );
  const server = await serveStatic(DIST, prefixes, extra, cache);
  const userDataDir = await mkdtemp(join(tmpdir(), 'fencelab-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    ...options,
  });
  await mkdir(SCREENSHOTS, { recursive: true });
  return {
    server,
    context,
    async close() {
      await context.close();
      await server.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the page at `path` and records everything that would mean it is broken: console errors,
 * uncaught exceptions (a Rust panic aborts the wasm module and shows up here), failed requests.
 */
export async function openPage(env, path = '/', ready = '#play') {
  const page = await env.context.newPage();
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  await page.goto(env.server.origin + path);
  // The wasm app has started once the player is on screen.
  await page.locator(ready).waitFor({ state: 'visible', timeout: 20_000 });
  return { page, problems };
}

/** What the title's badge (`#story-title .badge` in `scope`, a page or frame) says runs: its own
 * text, without the words for screen readers. */
export const badgeLabel = (scope) =>
  scope
    .locator('#story-title .badge')
    .first()
    .evaluate((badge) => [...badge.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('').trim());

/** The trimmed text of the first element matching `selector`. */
export const text = async (page, selector) => (await page.locator(selector).first().textContent())?.trim();

/** Saves a screenshot under SCREENSHOTS. */
export async function shot(page, name, options = {}) {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), animations: 'disabled', ...options });
}
