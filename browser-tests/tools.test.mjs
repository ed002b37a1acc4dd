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
const toolsWasm = (url) => isTools(url.href) && url.pathname.endsWith('.wasm');
const toolsGlue = (url) => isTools(url.href) && url.pathname.endsWith('.js');
/** A slow network: the tools' wasm arrives `ms` milliseconds late. */
const slowTools = (page, ms) =>
  page.route(toolsWasm, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await route.continue();
  });
/** `keydown` listeners on the document, through the DevTools protocol. */
async function keyListeners(page) {
  const cdp = await page.context().newCDPSession(page);
  const { result } = await cdp.send('Runtime.evaluate', { expression: 'document' });
  const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId });
  await cdp.detach();
  return listeners.filter((l) => l.type === 'keydown').length;
}

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
  assert.equal(await keyListeners(page), 1);

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
  // One page now: the viewer's host element and its key listener went with it.
  assert.equal(await page.locator('.fencelab-page').count(), 1);
  assert.equal(await keyListeners(page), 1);
  await page.locator('#story-title').click();
  await page.keyboard.press('ArrowRight');
  assert.equal((await position(page))[0], at + 1);
  // More tools need nothing more.
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor();
  await page.click('#tab-playground');
  await page.locator('.playground').waitFor();
  assert.equal(requests.filter(isTools).length, 2);
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

test('pressing tools while they load: only the last press counts, and only once', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=4');
  await slowTools(page, 1000);
  await page.click('#compare-toggle');
  await page.locator('#tools-status').filter({ hasText: 'Loading the tools' }).waitFor();
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor({ timeout: 20_000 });
  // Pressed twice, but on once: a second press would have turned compare mode off again.
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
  assert.equal(await page.locator('#compare-toggle').getAttribute('aria-pressed'), 'true');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a compare link whose tools fail opens in the viewer, which keeps the address; a retry opens compare', async () => {
  const fragment = '#scenario=paused-worker&variant=broken&step=3&compare=unfenced,fenced';
  const { page, problems } = await openPage(env, '/', '#play');
  await page.route(toolsGlue, (route) => route.fulfill({ status: 503, body: 'unavailable' }));
  await page.evaluate((f) => {
    location.hash = f;
    location.reload();
  }, fragment);
  await page.locator('#tools-status').filter({ hasText: 'could not load' }).waitFor({ timeout: 20_000 });
  // The viewer shows the link's story and step without compare mode, and the address follows it.
  assert.equal((await position(page))[0], 3);
  await page.click('#step-forward');
  await page.waitForFunction(() => location.hash.includes('step=4'));
  assert.ok(!(await hash(page)).includes('compare='));
  // The glue script failed; the retry fetches it anew and compare mode opens where the reader is.
  await page.unroute(toolsGlue);
  await page.click('#compare-toggle');
  await page.locator('[data-testid="compare"]').waitFor({ timeout: 20_000 });
  assert.equal(await page.locator('#compare-toggle').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('#case').inputValue(), 'paused-worker');
  // The failures this test made: the 503 answer and the module load it aborted.
  const made = (p) => /503/.test(p) || /fencelab-tools-[0-9a-f]+\.js net::ERR_ABORTED/.test(p);
  assert.deepEqual(problems.filter((p) => !made(p)), []);
  await page.close();
});

test('when the tools fail to start, the viewer comes back on the same view and says why', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=7');
  // The real module, whose page throws as it mounts.
  await page.route(
    (url) => toolsGlue(url) && !url.search.includes('real'),
    (route) => {
      const real = `${route.request().url()}?real=1`;
      route.fulfill({
        contentType: 'text/javascript',
        body: `import init, * as real from '${real}';
export default init;
export const stop = real.stop;
export function mount() { real.mount(); throw new Error('the tools page failed to start'); }`,
      });
    },
  );
  await page.click('#compare-toggle');
  const status = page.locator('#tools-status');
  await status.filter({ hasText: 'failed to start' }).waitFor({ timeout: 20_000 });
  assert.match(await status.textContent(), /The tools could not load: the tools page failed to start/);
  // The viewer again, at the same step, one page, working.
  assert.equal(await page.locator('.fencelab-page').count(), 1);
  assert.equal(await page.locator('[data-testid="compare"]').count(), 0);
  assert.equal((await position(page))[0], 7);
  await page.click('#step-forward');
  assert.equal((await position(page))[0], 8);
  assert.deepEqual(problems, []);
  await page.close();
});

test('import after a slow load: the chooser waits for a fresh press instead of failing silently', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=2');
  // Slower than the browser's activation window (5 s in Chromium): the original press has expired.
  await slowTools(page, 6000);
  let choosers = 0;
  page.on('filechooser', () => choosers++);
  await page.click('label[for="import-json"]');
  await page.locator('[data-testid="position"]').waitFor();
  await page.waitForFunction(() => typeof window.wasmBindings?.explore_pace === 'function', null, { timeout: 30_000 });
  await page.waitForFunction(() => document.activeElement?.id === 'import-json');
  assert.equal(choosers, 0, 'no chooser without a live press');
  // The control has the focus: one key opens the chooser.
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Space')]);
  assert.ok(chooser);
  assert.deepEqual(problems, []);
  await page.close();
});
