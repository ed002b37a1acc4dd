// The example tutorial page (docs/index.html) with the built app copied beside it as `fencelab/`,
// the way its note says to publish it: both embedded stories load, play and show what they should.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, DIST, badgeLabel, shot } from './harness.mjs';
import { serveStatic } from './static-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const DOCS = resolve(here, '..', 'docs');

let site;
let server;
let context;
let profile;

before(async () => {
  site = await mkdtemp(join(tmpdir(), 'fencelab-site-'));
  await cp(DOCS, site, { recursive: true });
  await cp(DIST, join(site, 'fencelab'), { recursive: true });
  // The notes page names no icon, so the browser asks for /favicon.ico; a site would have one.
  await writeFile(join(site, 'favicon.ico'), '');
  server = await serveStatic(site, ['/']);
  profile = await mkdtemp(join(tmpdir(), 'fencelab-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1000, height: 900 },
  });
});

after(async () => {
  await context?.close();
  await server?.close();
  for (const dir of [site, profile]) if (dir) await rm(dir, { recursive: true, force: true });
});

test('the course-notes page embeds the unfenced and the fenced paused worker', async () => {
  const page = await context.newPage();
  const problems = [];
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`));
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
  await page.goto(`${server.origin}/index.html`);
  const outcomes = {};
  for (const id of ['unfenced', 'fenced']) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    const frame = page.frameLocator(`#${id}`);
    await frame.locator('#play').waitFor({ timeout: 20_000 });
    assert.equal(await frame.locator('#case').count(), 0, 'no picker in an embed');
    await frame.locator('#to-end').click();
    outcomes[id] = {
      variant: await badgeLabel(frame),
      violations: await frame.locator('.mark.violation:visible').count(),
      rejected: await frame.locator('.mark.rejected:visible').count(),
    };
  }
  assert.deepEqual(outcomes.unfenced.variant, 'broken');
  assert.ok(outcomes.unfenced.violations >= 1, JSON.stringify(outcomes));
  assert.equal(outcomes.unfenced.rejected, 0);
  assert.equal(outcomes.fenced.variant, 'fenced');
  assert.equal(outcomes.fenced.violations, 0);
  assert.equal(outcomes.fenced.rejected, 1);
  await page.locator('#fenced').scrollIntoViewIfNeeded();
  await shot(page, 'docs-embedded', { fullPage: false });
  assert.deepEqual(problems, []);
  await page.close();
});
