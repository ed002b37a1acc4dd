// The example mdBook (docs/book, built by scripts/book.sh into dist-book/ beside dist/), served
// with the page build as its fencelab/ folder, the way its book.toml says to publish it: every
// ```fencelab block became a player showing the story, variant and step it names, fitted to its
// content, and the chapters pass axe.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { badgeLabel, launch, shot } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const BOOK = resolve(process.env.FENCELAB_BOOK ?? join(here, '..', 'dist-book'));
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let env;

before(async () => {
  assert.ok(existsSync(join(BOOK, 'index.html')), `no ${BOOK}/index.html: run \`bash scripts/book.sh\` first`);
  env = await launch(['/book/fencelab/'], { width: 1100, height: 900 }, { '/book/': BOOK });
});

after(async () => {
  await env?.close();
});

/** Opens a chapter and records anything that means it broke. */
async function chapter(name) {
  const page = await env.context.newPage();
  const problems = [];
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`));
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
  await page.goto(`${env.server.origin}/book/${name}.html`);
  return { page, problems };
}

/** The nth player's frame, once its page has started. A reader scrolls to the player; one that
 * got ready in view waits behind its still, which says so, and the reader starts it there. */
async function player(page, nth = 0) {
  const element = page.locator('fencelab-player').nth(nth);
  await element.scrollIntoViewIfNeeded();
  await element.locator('.enter.ready, .still.gone').first().waitFor({ state: 'attached', timeout: 20_000 });
  const sign = element.locator('.enter.ready');
  if (await sign.count()) await sign.click();
  await element.locator('.still.gone').waitFor({ state: 'attached', timeout: 5_000 });
  const iframe = element.locator('iframe');
  const frame = await (await iframe.elementHandle()).contentFrame();
  await frame.locator('svg.swimlanes').waitFor({ timeout: 20_000 });
  return { element, iframe, frame };
}

/** Waits until the frame holds its content exactly: nothing scrolls inside, nothing blank. */
async function fitted(iframe, frame) {
  let m;
  for (let i = 0; i < 80; i++) {
    const inner = await frame.evaluate(() => ({
      scrollHeight: document.documentElement.scrollHeight,
      clientHeight: document.documentElement.clientHeight,
      content: document.body.getBoundingClientRect().height,
    }));
    m = { ...inner, styled: await iframe.evaluate((f) => f.style.height) };
    if (m.scrollHeight <= m.clientHeight && m.clientHeight - m.content < 2) return m;
    await frame.page().waitForTimeout(50);
  }
  assert.fail(`the player does not fit its content: ${JSON.stringify(m)}`);
}

/** The serious and critical violations axe finds in `scope` (a page or a frame), within
 * `selector`. A chapter is checked within its `main`: the menu bar and sidebar are mdBook's own
 * theme (whose sidebar toggle puts aria-expanded on a label, which axe reports), not ours. */
async function axe(scope, selector = 'html') {
  if (!(await scope.evaluate(() => 'axe' in window))) await scope.addScriptTag({ path: AXE });
  const result = await scope.evaluate((selector) =>
    window.axe.run(document.querySelector(selector), { resultTypes: ['violations'], runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
  selector);
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const step = (frame) => frame.locator('#scrubber').getAttribute('aria-valuetext');

test('the paused-worker chapter plays the broken story from step 19, fitted, and passes axe', async () => {
  const { page, problems } = await chapter('paused-worker');
  assert.equal(await page.locator('fencelab-player').count(), 1);
  // The element's content is the story's still at step 19 with a link to the page there: what a
  // reader sees before the player is ready, without JavaScript and on paper.
  const still = page.locator('fencelab-player figure.fencelab-still');
  assert.match(await still.locator('a').getAttribute('href'), /^fencelab\/index\.html#scenario=paused-worker&variant=broken&step=19$/);
  assert.match(await still.locator('figcaption').innerText(), /^A paused worker wakes up after its lease expired \(broken\) · step 19 of 20$/);
  assert.match(await still.innerText(), /Broken: stale write accepted/);
  const { iframe, frame } = await player(page);
  assert.match(await iframe.getAttribute('title'), /^Fencelab: A paused worker wakes up after its lease expired \(broken\)$/);
  assert.equal(await badgeLabel(frame), 'broken');
  assert.match(await step(frame), /^step 19 of /);
  // The player follows the book's theme, and the reader's change of it.
  assert.equal(await page.locator('fencelab-player').getAttribute('theme'), 'book');
  await frame.waitForFunction(() => document.documentElement.dataset.theme === 'light', null, { timeout: 10_000 });
  await page.evaluate(() => document.documentElement.classList.replace('light', 'coal'));
  await frame.waitForFunction(() => document.documentElement.dataset.theme === 'dark', null, { timeout: 10_000 });
  await page.evaluate(() => document.documentElement.classList.replace('coal', 'light'));
  await frame.waitForFunction(() => document.documentElement.dataset.theme === 'light', null, { timeout: 10_000 });
  await fitted(iframe, frame);
  assert.deepEqual(await axe(page, 'main'), [], 'the chapter');
  assert.deepEqual(await axe(frame), [], 'the player');
  await shot(page, 'book-paused-worker', { fullPage: false });
  assert.deepEqual(problems, []);
  await page.close();
});

test('the fencing-token chapter: the fenced story at step 19, and a dark player with its log', async () => {
  const { page, problems } = await chapter('fencing-token');
  assert.equal(await page.locator('fencelab-player').count(), 2);
  const first = await player(page, 0);
  assert.equal(await badgeLabel(first.frame), 'fenced');
  assert.match(await step(first.frame), /^step 19 of /);
  await fitted(first.iframe, first.frame);
  const second = await player(page, 1);
  assert.equal(await second.iframe.getAttribute('title'), 'Fencelab: the fenced paused worker, with its event log');
  assert.equal(await second.frame.evaluate(() => document.documentElement.dataset.theme), 'dark');
  const background = await second.frame.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--bg').trim());
  assert.equal(background, '#0e1217', 'the dark theme, whatever the reader\'s setting');
  assert.ok(await second.frame.locator('#step-forward').isVisible(), 'controls');
  assert.equal(await second.frame.locator('.caption').count(), 0, 'no caption: not among its parts');
  // The text says what the player shows.
  assert.match(await page.locator('main').innerText(), /with the diagram, the player.s controls and the\s+whole event log/);
  assert.doesNotMatch(await page.locator('main').innerText(), /only the diagram and the event log/);
  await fitted(second.iframe, second.frame);
  // The log shows whole: no scrolling inside the frame, no row cut at its bottom.
  const log = await second.frame.locator('.log').evaluate((l) => ({ scroll: l.scrollHeight, client: l.clientHeight, rows: l.querySelectorAll('.entry').length }));
  assert.ok(log.rows >= 20 && log.scroll <= log.client, JSON.stringify(log));
  // Different parts, different heights: each player fits its own content.
  const heights = await page.locator('fencelab-player iframe').evaluateAll((fs) => fs.map((f) => f.style.height));
  assert.notEqual(heights[0], heights[1]);
  assert.deepEqual(await axe(page, 'main'), [], 'the chapter');
  assert.deepEqual(await axe(second.frame), [], 'the dark player');
  await shot(page, 'book-fencing-token', { fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('the inline scenario plays: A\'s late save is refused', async () => {
  const { page, problems } = await chapter('your-scenario');
  const { iframe, frame } = await player(page);
  assert.equal(await iframe.getAttribute('title'), 'Fencelab: A slow worker and a short lease (custom)');
  // The book's own scenario is its author's, not an edit the reader made.
  assert.equal(await badgeLabel(frame), 'custom scenario');
  await frame.locator('#to-end').click();
  assert.equal(await frame.locator('.mark.rejected:visible').count(), 1);
  assert.equal(await frame.locator('.mark.violation:visible').count(), 0);
  await fitted(iframe, frame);
  assert.deepEqual(await axe(page, 'main'), [], 'the chapter');
  assert.deepEqual(problems, []);
  await page.close();
});
