// The page's two modules (issue 5's size budget): every visit loads the viewer alone; the tools
// module (compare, editor, explorer search, export and import, playground) is fetched on first
// use, takes the page over and keeps the view. Like every browser test, each fails on any
// console error, uncaught exception or failed request it did not cause on purpose.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, text } from './harness.mjs';

let env;

before(async () => {
  env = await launch();
});

after(async () => {
  await env?.close();
});

const position = async (page) => (await text(page, '[data-testid="position"] .mono')).split('/').map(Number);
const hash = (page) => page.evaluate(() => location.hash);
const isTools = (url) => /\/fencelab-tools[^/]*$/.test(new URL(url).pathname);

test('the first load is the viewer alone; the first tool loads the tools and keeps the view', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=6');
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  // The viewer plays, and its protection switches work without the tools.
  await page.click('#step-forward');
  await page.check('#switch-unfenced_store');
  await page.waitForFunction(() => location.hash.includes('break=unfenced_store'));
  await page.click('#step-forward');
  const [at] = await position(page);
  const before = await hash(page);
  const caption = await text(page, '#caption');
  assert.equal(requests.filter(isTools).length, 0, `no tools before a tool is used: ${requests}`);
  assert.equal(await page.evaluate(() => typeof window.wasmBindings.explore_pace), 'undefined');

  // The editor is a tool: pressing it loads the tools, which open the editor on the same view.
  await page.click('#editor-toggle');
  await page.locator('.editor textarea').waitFor({ timeout: 20_000 });
  assert.equal(requests.filter(isTools).length, 2, 'the tools module: its JS glue and its wasm');
  assert.equal(await page.locator('#editor-toggle').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'editor-toggle');
  assert.equal(await hash(page), before);
  assert.equal(await text(page, '#caption'), caption);
  assert.ok(await page.isChecked('#switch-unfenced_store'));
  assert.equal(await page.evaluate(() => typeof window.wasmBindings.explore_pace), 'function');
  // One page now: the viewer's key listener went with it, so a key steps exactly once.
  await page.locator('#story-title').click();
  await page.keyboard.press('ArrowRight');
  assert.equal((await position(page))[0], at + 1);
  // More tools need nothing more.
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor();
  await page.click('#tab-playground');
  await page.locator('.playground').waitFor();
  assert.equal(requests.filter(isTools).length, 2);
  assert.equal(await page.locator('.app').count(), 1, 'one page mounted');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a link that needs the tools (compare mode) loads them at once and keeps its address', async () => {
  const fragment = '#scenario=paused-worker&variant=broken&step=3&compare=unfenced,fenced';
  const { page, problems } = await openPage(env, `/${fragment}`);
  await page.locator('[data-testid="compare"]').waitFor({ timeout: 20_000 });
  assert.equal(await hash(page), fragment);
  assert.equal((await position(page))[0], 3);
  assert.deepEqual(problems, []);
  await page.close();
});

test('when the tools cannot load, the viewer says why, keeps working, and can try again', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=4');
  const toolsWasm = (url) => isTools(url.href) && url.pathname.endsWith('.wasm');
  await page.route(toolsWasm, (route) => route.fulfill({ status: 503, body: 'unavailable' }));
  await page.click('#compare-toggle');
  const status = page.locator('#tools-status');
  await status.filter({ hasText: 'could not load' }).waitFor();
  assert.match(await status.textContent(), /The tools could not load: the server answered 503/);
  assert.equal(await status.getAttribute('role'), 'alert');
  // The viewer is still the page, and still plays.
  await page.click('#step-forward');
  assert.equal((await position(page))[0], 5);
  assert.equal(await page.locator('#compare-toggle').getAttribute('aria-pressed'), 'false');
  // The server is back: the next press loads the tools.
  await page.unroute(toolsWasm);
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor({ timeout: 20_000 });
  assert.equal(await page.locator('#tools-status').count(), 0);
  // The one failed request is the one this test made fail.
  assert.deepEqual(problems.filter((p) => !/HTTP 503|status of 503/.test(p)), []);
  assert.equal(problems.length, 2, problems.join('\n'));
  await page.close();
});
