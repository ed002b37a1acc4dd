// The <fencelab-player> element (web/fencelab-player.js, shipped in dist/), on a plain page that
// loads it from the page build, as a Docusaurus, MkDocs or blog page would: it makes its own
// titled iframe, sizes itself to what the embed reports, two players on one page size
// independently, and changing an attribute switches the story.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { badgeLabel, launch, shot } from './harness.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const HOST = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Notes with two players</title><link rel="icon" href="data:,"></head>
<body style="margin:0 auto;max-width:760px;font:16px system-ui">
<main>
<h1>Notes with two players</h1>
<fencelab-player id="one" story="paused-worker" variant="broken" step="19"></fencelab-player>
<p>Between the players.</p>
<fencelab-player id="two" story="paused-worker" variant="fenced" parts="diagram" label="The fenced store, diagram only"></fencelab-player>
</main>
<script src="fencelab/fencelab-player.js"></script>
</body>
</html>`;

// Two recorded histories on the site, one given a title; the addresses are relative to the host page.
const HISTORIES = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Notes with a recorded run</title><link rel="icon" href="data:,"></head>
<body style="margin:0 auto;max-width:760px;font:16px system-ui">
<main>
<h1>Notes with a recorded run</h1>
<fencelab-player id="titled" history="runs/paused-broken.jsonl" title="Our outage, replayed" step="3"></fencelab-player>
<fencelab-player id="plain" history="/notes/runs/paused-broken.jsonl" parts="diagram"></fencelab-player>
<fencelab-player id="copied" src="../fencelab/index.html#history=../notes/runs/paused-broken.jsonl&amp;step=2"></fencelab-player>
<fencelab-player id="bare"></fencelab-player>
</main>
<script src="../fencelab/fencelab-player.js"></script>
</body>
</html>`;

// Players an author got wrong, and one that follows an mdBook theme class on <html>.
const MISTAKES = `<!doctype html>
<html lang="en" class="light">
<head><meta charset="utf-8"><title>Notes with mistakes</title><link rel="icon" href="data:,"></head>
<body style="margin:0 auto;max-width:760px;font:16px system-ui">
<main>
<h1>Notes with mistakes</h1>
<fencelab-player id="parts" story="paused-worker" parts="controls,bogus"></fencelab-player>
<fencelab-player id="story" story="paused-wroker"></fencelab-player>
<fencelab-player id="step" story="paused-worker" variant="broken" step="999"></fencelab-player>
<fencelab-player id="book" story="paused-worker" theme="book" parts="diagram"></fencelab-player>
</main>
<script src="../fencelab/fencelab-player.js"></script>
</body>
</html>`;

let env;
let site;

before(async () => {
  site = await mkdtemp(join(tmpdir(), 'fencelab-host-'));
  await writeFile(join(site, 'index.html'), HOST);
  await mkdir(join(site, 'notes', 'runs'), { recursive: true });
  await writeFile(join(site, 'notes', 'index.html'), HISTORIES);
  await mkdir(join(site, 'mistakes'), { recursive: true });
  await writeFile(join(site, 'mistakes', 'index.html'), MISTAKES);
  await copyFile(new URL('fixtures/paused-broken.jsonl', import.meta.url), join(site, 'notes', 'runs', 'paused-broken.jsonl'));
  env = await launch(['/fencelab/'], { width: 900, height: 900 }, { '/': site });
});

after(async () => {
  await env?.close();
  if (site) await rm(site, { recursive: true, force: true });
});

async function host(path = '/index.html') {
  const page = await env.context.newPage();
  const problems = [];
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`));
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
  await page.goto(`${env.server.origin}${path}`);
  return { page, problems };
}

/** The frame of the player `id`, once its page has started. */
async function frameOf(page, id) {
  const iframe = page.locator(`#${id} iframe`);
  await iframe.scrollIntoViewIfNeeded();
  const frame = await (await iframe.elementHandle()).contentFrame();
  await frame.locator('svg.swimlanes').waitFor({ timeout: 20_000 });
  return { iframe, frame };
}

/** The frame's content and the height the element gave it, once they agree. */
async function fitted(page, id) {
  const { iframe, frame } = await frameOf(page, id);
  let m;
  for (let i = 0; i < 80; i++) {
    m = await frame.evaluate(() => ({
      scrollHeight: document.documentElement.scrollHeight,
      clientHeight: document.documentElement.clientHeight,
      content: document.body.getBoundingClientRect().height,
    }));
    m.styled = await iframe.evaluate((f) => f.style.height);
    if (m.scrollHeight <= m.clientHeight && m.clientHeight - m.content < 2) return { ...m, frame, iframe };
    await page.waitForTimeout(50);
  }
  assert.fail(`#${id} does not fit its content: ${JSON.stringify(m)}`);
}

test('each player makes a titled frame and fits its own content', async () => {
  const { page, problems } = await host();
  const one = await fitted(page, 'one');
  const two = await fitted(page, 'two');
  // Named by the story's title, as the player reports it, not by the story's id.
  await page.waitForFunction(() => document.querySelector('#one').shadowRoot.querySelector('iframe').title !== 'Fencelab: paused-worker (broken)');
  assert.equal(await one.iframe.getAttribute('title'), 'Fencelab: A paused worker wakes up after its lease expired (broken)');
  assert.equal(await two.iframe.getAttribute('title'), 'The fenced store, diagram only');
  assert.equal(await badgeLabel(one.frame), 'broken');
  assert.match(await one.frame.locator('#scrubber').getAttribute('aria-valuetext'), /^step 19 of /);
  // The diagram alone is shorter than the diagram with controls and caption: each frame took
  // its own embed's height, not the other's nor the first guess.
  assert.ok(parseFloat(two.styled) < parseFloat(one.styled), JSON.stringify([one.styled, two.styled]));
  assert.notEqual(one.styled, '640px');
  // A longer caption in the first changes only the first.
  const before = { one: one.styled, two: two.styled };
  await one.frame.locator('#to-start').click();
  let after;
  for (let i = 0; i < 40; i++) {
    after = await page.locator('fencelab-player iframe').evaluateAll((fs) => fs.map((f) => f.style.height));
    if (after[0] !== before.one) break;
    await page.waitForTimeout(50);
  }
  assert.notEqual(after[0], before.one, 'the first player follows its caption');
  assert.equal(after[1], before.two, 'the second player keeps its height');
  await fitted(page, 'one');
  await shot(page, 'player-element', { fullPage: true });
  // axe on the host page: the frames have names, the element adds nothing else to check.
  await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'], runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] }));
  const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
  assert.deepEqual(serious, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('changing attributes switches the story, the variant and the theme', async () => {
  const { page, problems } = await host();
  const { frame } = await fitted(page, 'one');
  const title = await frame.locator('#story-title').textContent();
  await page.locator('#one').evaluate((el) => {
    el.setAttribute('story', 'longer-lease');
    el.removeAttribute('variant');
    el.removeAttribute('step');
    el.setAttribute('theme', 'dark');
  });
  const iframe = page.locator('#one iframe');
  await frame.waitForFunction((old) => document.querySelector('#story-title')?.textContent !== old, title, { timeout: 10_000 });
  assert.match(await frame.locator('#story-title').textContent(), /longer lease/i);
  await page.waitForFunction(() => /longer lease/i.test(document.querySelector('#one').shadowRoot.querySelector('iframe').title));
  assert.match(await frame.locator('#scrubber').getAttribute('aria-valuetext'), /^step 0 of /);
  assert.equal(await frame.evaluate(() => document.documentElement.dataset.theme), 'dark');
  // The frame shows the state the last of the attributes describe. The page writes its own
  // address at most every 250 ms, so wait for it rather than read it at once.
  const whole = /^#scenario=longer-lease&variant=[^&]+&embed=controls,caption&theme=dark(&host=element)?$/;
  await frame.waitForFunction((source) => new RegExp(source).test(location.hash), whole.source, { timeout: 5_000 }).catch(() => {});
  assert.match(await frame.evaluate(() => location.hash), whole);
  await fitted(page, 'one');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a player shows a recorded history under its own title, named after it', async () => {
  const { page, problems } = await host('/notes/');
  const titled = await fitted(page, 'titled');
  const plain = await fitted(page, 'plain');
  assert.equal(await titled.iframe.getAttribute('title'), 'Fencelab: Our outage, replayed');
  await page.waitForFunction(() => document.querySelector('#plain').shadowRoot.querySelector('iframe').title !== 'Fencelab: history paused-broken.jsonl');
  assert.equal(await plain.iframe.getAttribute('title'), 'Fencelab: History: paused-broken.jsonl');
  // Both addresses reach the page relative to it, and the file opened, not a story.
  const hash = await titled.frame.evaluate(() => location.hash);
  assert.match(hash, /^#history=\.\.\/notes\/runs\/paused-broken\.jsonl&step=3&embed=controls,caption&title=Our%20outage,%20replayed(&host=element)?$/);
  assert.match(await plain.frame.evaluate(() => location.hash), /^#history=\.\.\/notes\/runs\/paused-broken\.jsonl&embed=diagram(&host=element)?$/);
  await titled.frame.locator('#story-title').filter({ hasText: 'Our outage, replayed' }).waitFor({ timeout: 10_000 });
  assert.match(await titled.frame.locator('#scrubber').getAttribute('aria-valuetext'), /^step 3 of /);
  // A view copied from the page into `src` is kept; a player that names nothing says so, in
  // its frame's name and inside the frame.
  const copied = await fitted(page, 'copied');
  assert.match(await copied.frame.evaluate(() => location.hash), /^#history=\.\.\/notes\/runs\/paused-broken\.jsonl&step=2&embed=controls,caption(&host=element)?$/);
  await page.waitForFunction(() => document.querySelector('#copied').shadowRoot.querySelector('iframe').title !== 'Fencelab: paused-broken.jsonl');
  assert.equal(await copied.iframe.getAttribute('title'), 'Fencelab: History: paused-broken.jsonl');
  for (const frame of [titled.frame, plain.frame, copied.frame]) {
    assert.doesNotMatch(await frame.locator('body').innerText(), /there is no built-in scenario|could not be opened|null/);
  }
  const bare = page.locator('#bare iframe');
  await bare.scrollIntoViewIfNeeded();
  assert.equal(await bare.getAttribute('title'), 'Fencelab: no story chosen');
  const inside = await (await bare.elementHandle()).contentFrame();
  await inside.locator('#link-error').filter({ hasText: 'the link names no scenario' }).waitFor({ timeout: 20_000 });
  assert.deepEqual(problems, []);
  await page.close();
});

test("a player's mistakes are named by its attributes, and a book-themed player follows the book", async () => {
  const { page, problems } = await host('/mistakes/');
  const inside = async (id) => {
    const iframe = page.locator(`#${id} iframe`);
    await iframe.scrollIntoViewIfNeeded();
    return (await iframe.elementHandle()).contentFrame();
  };
  const parts = await inside('parts');
  const said = parts.locator('#link-error');
  await said.waitFor({ timeout: 20_000 });
  assert.match(await said.textContent(), /attribute `parts`: unknown part "bogus" \(parts are: diagram, picker, controls, caption, legend, panels and log\)/);
  assert.match(await said.textContent(), /<fencelab-player>/);
  assert.doesNotMatch(await said.textContent(), /link parameter|its link/);
  const story = await inside('story');
  await story.locator('#link-error').waitFor({ timeout: 20_000 });
  assert.match(await story.locator('#link-error').textContent(), /attribute `story`: no story "paused-wroker" \(did you mean paused-worker\?\)/);
  // A step past the end shows the last step and says so, by the attribute's name.
  const step = await inside('step');
  await step.locator('#link-note').waitFor({ timeout: 20_000 });
  assert.match(await step.locator('#link-note').textContent(), /attribute step 999 is past the end of this story \(20 steps\)/);
  assert.match(await step.locator('#scrubber').getAttribute('aria-valuetext'), /^step 20 of 20/);
  // mdBook's Light theme, then Navy as a reader picks it: the player follows.
  const book = await inside('book');
  await book.locator('svg.swimlanes').waitFor({ timeout: 20_000 });
  const theme = () => book.evaluate(() => document.documentElement.dataset.theme ?? 'none');
  await book.waitForFunction(() => document.documentElement.dataset.theme === 'light', null, { timeout: 10_000 });
  await page.evaluate(() => document.documentElement.classList.replace('light', 'navy'));
  await book.waitForFunction(() => document.documentElement.dataset.theme === 'dark', null, { timeout: 10_000 });
  await page.evaluate(() => document.documentElement.classList.replace('navy', 'rust'));
  await book.waitForFunction(() => document.documentElement.dataset.theme === 'light', null, { timeout: 10_000 });
  assert.equal(await theme(), 'light');
  assert.deepEqual(problems, []);
  await page.close();
});
