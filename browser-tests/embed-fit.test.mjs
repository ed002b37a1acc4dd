// Embeds that fit: the copied embed code, put on a page of its own at 320, 600 and 900 px, sizes
// its iframe from the height message the embed posts, so nothing scrolls inside the frame at any
// step and nothing is left blank below; without the script, its default height fits the default
// embed; a diagram-only embed shrinks to its diagram; and the course-notes page (docs/) fits both
// of its embedded stories the same way.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIST, launch, openPage, shot } from './harness.mjs';
import { serveStatic } from './static-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));

let env;
let site;
let docs;

before(async () => {
  env = await launch(['/', '/docs/deep/fencelab/']);
  // The course-notes page with the build beside it, as its note says to publish it.
  site = await mkdtemp(join(tmpdir(), 'fencelab-site-'));
  await cp(resolve(here, '..', 'docs'), site, { recursive: true });
  await cp(DIST, join(site, 'fencelab'), { recursive: true });
  await writeFile(join(site, 'favicon.ico'), '');
  docs = await serveStatic(site, ['/']);
});

after(async () => {
  await env?.close();
  await docs?.close();
  if (site) await rm(site, { recursive: true, force: true });
});

/** The embed code the share panel offers for `hash`, served from a nested path. */
async function embedCode(hash) {
  const { page, problems } = await openPage(env, `/docs/deep/fencelab/#${hash}`);
  const snippet = await page.locator('#embed-code').inputValue();
  assert.deepEqual(problems, []);
  await page.close();
  return snippet;
}

/** A page `width` px wide holding `html`, with the embed inside loaded. */
async function hostPage(html, width) {
  const page = await env.context.newPage();
  const problems = [];
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`));
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  await page.setViewportSize({ width, height: 900 });
  await page.setContent(`<!doctype html><meta name="viewport" content="width=device-width"><body style="margin:0">${html}</body>`);
  await page.frameLocator('iframe').locator('svg.swimlanes').waitFor({ timeout: 20_000 });
  return { page, problems };
}

/** The iframe's document and the iframe as the host sees it. */
async function measure(page, iframe = page.locator('iframe').first()) {
  const frame = await (await iframe.elementHandle()).contentFrame();
  const inner = await frame.evaluate(() => ({
    scrollHeight: document.documentElement.scrollHeight,
    clientHeight: document.documentElement.clientHeight,
    content: document.body.getBoundingClientRect().height,
    diagramBottom: document.querySelector('.diagram').getBoundingClientRect().bottom,
  }));
  const outer = await iframe.evaluate((f) => ({ styled: f.style.height }));
  return { ...inner, ...outer };
}

/** Waits until the host has applied a height message and nothing scrolls inside the frame. */
async function fitted(page, iframe) {
  let m;
  for (let i = 0; i < 60; i++) {
    m = await measure(page, iframe);
    if (m.styled && m.scrollHeight <= m.clientHeight) return m;
    await page.waitForTimeout(50);
  }
  return m;
}

test('the copied embed fits its iframe at 320, 600 and 900 px: nothing scrolls inside at any step', async () => {
  const snippet = await embedCode('scenario=paused-worker&variant=broken');
  assert.match(snippet, /^<iframe [^>]*height="680"[^>]*><\/iframe>\n<script>\n[\s\S]*"fencelab:height"[\s\S]*f\.contentWindow === e\.source[\s\S]*<\/script>$/);
  for (const width of [320, 600, 900]) {
    const { page, problems } = await hostPage(snippet, width);
    const frame = page.frameLocator('iframe');
    // The start, a long caption at the break, the end: captions of different lengths.
    for (const press of [null, 'step-19', 'to-end', 'to-start']) {
      if (press === 'step-19') for (let i = 0; i < 19; i++) await frame.locator('#step-forward').click();
      else if (press) await frame.locator(`#${press}`).click();
      const m = await fitted(page);
      assert.ok(m.styled, `${width}px ${press}: the height message was applied`);
      assert.ok(m.scrollHeight <= m.clientHeight, `${width}px ${press}: the embed scrolls inside: ${JSON.stringify(m)}`);
      assert.ok(m.clientHeight - m.content < 2, `${width}px ${press}: blank below the embed: ${JSON.stringify(m)}`);
      if (press === 'step-19') await shot(page, `embed-fit-${width}`, { fullPage: true });
    }
    // The reported height does not feed back into the content: it stays put once applied.
    const settled = await measure(page);
    await page.waitForTimeout(400);
    assert.equal((await measure(page)).styled, settled.styled, `${width}px: the frame keeps growing`);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('without the script, the default height fits the default embed; a diagram-only embed leaves no blank', async () => {
  const snippet = await embedCode('scenario=paused-worker&variant=broken');
  const iframeOnly = snippet.slice(0, snippet.indexOf('\n<script>'));
  for (const width of [600, 900]) {
    const { page, problems } = await hostPage(iframeOnly, width);
    await page.waitForTimeout(300);
    const m = await measure(page);
    assert.equal(m.styled, '', 'no script, no resizing');
    assert.equal(m.clientHeight, 680);
    assert.ok(m.scrollHeight <= m.clientHeight, `${width}px: ${JSON.stringify(m)}`);
    assert.deepEqual(problems, []);
    await page.close();
  }
  const bare = snippet.replace('embed=controls,caption', 'embed=diagram');
  assert.notEqual(bare, snippet);
  const { page, problems } = await hostPage(bare, 600);
  const m = await fitted(page);
  assert.ok(m.scrollHeight <= m.clientHeight, JSON.stringify(m));
  // Below the diagram: only its card's padding and the page's.
  assert.ok(m.clientHeight - m.diagramBottom < 40, `blank below the diagram: ${JSON.stringify(m)}`);
  await shot(page, 'embed-fit-diagram-only', { fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('the course-notes page fits both embedded stories to their content', async () => {
  for (const width of [360, 1000]) {
    const page = await env.context.newPage();
    const problems = [];
    page.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`));
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${docs.origin}/index.html`);
    for (const id of ['unfenced', 'fenced']) {
      const iframe = page.locator(`#${id}`);
      await iframe.scrollIntoViewIfNeeded();
      await page.frameLocator(`#${id}`).locator('#play').waitFor({ timeout: 20_000 });
      await page.frameLocator(`#${id}`).locator('#to-end').click();
      const m = await fitted(page, iframe);
      assert.ok(m.styled, `${width}px #${id}: the height message was applied`);
      assert.ok(m.scrollHeight <= m.clientHeight, `${width}px #${id}: ${JSON.stringify(m)}`);
      assert.ok(m.clientHeight - m.content < 2, `${width}px #${id}: ${JSON.stringify(m)}`);
    }
    await page.locator('#fenced').scrollIntoViewIfNeeded();
    await shot(page, `docs-fit-${width}`, { fullPage: false });
    assert.deepEqual(problems, []);
    await page.close();
  }
});
