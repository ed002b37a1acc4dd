// The first screen is the diagram's: at 1440x900 and at 360x740, for a story, a course story
// and "You decide" mode, the swimlane diagram with rows of its lanes, the current step's
// caption and the play button are all inside the first viewport, before any scrolling; the
// story's intro is one line until "More"; "Break the protocol" comes after the diagram.
// Screenshots of each first screen go to a temporary folder (FENCELAB_SHOTS to choose it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, openPage } from './harness.mjs';

const OUT = process.env.FENCELAB_SHOTS ?? join(tmpdir(), 'fencelab-first-screen');
const SIZES = [
  ['desktop', { width: 1440, height: 900 }],
  ['phone', { width: 360, height: 740 }],
];
const VIEWS = [
  ['story', '/#scenario=paused-worker&variant=fenced'],
  ['course', '/#course=the-paused-worker'],
  // A reader's path decided so far, as a shared link opens it.
  ['decide', '/#scenario=paused-worker&variant=fenced&decide=1&steps=6&step=6'],
];
/** The tallest a lane's row band may need to show: a row is one tick label below the heads. */
const ROW_PX = 24;

let env;

before(async () => {
  env = await launch();
  await mkdir(OUT, { recursive: true });
});

after(async () => {
  await env?.close();
});

/** Where the first screen's parts are, in CSS pixels of the page before any scrolling. */
const firstScreen = (page) =>
  page.evaluate(() => {
    const box = (el) => {
      if (!el) return null;
      const r = el.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
    };
    const diagram = document.querySelector('#diagram-main');
    const heads = diagram?.querySelector('.lane-heads');
    const view = box(diagram);
    // The tick labels drawn below the lanes' heads and inside both the diagram's box and the
    // window: the rows of lanes a reader sees without scrolling.
    const floor = Math.min(view?.bottom ?? 0, innerHeight);
    const rows = [...(diagram?.querySelectorAll('.tick-label') ?? [])]
      .map(box)
      .filter((r) => r.top >= box(heads).bottom && r.bottom <= floor).length;
    return {
      scrollY,
      height: innerHeight,
      width: innerWidth,
      diagram: view,
      heads: box(heads),
      rows,
      lanes: diagram?.querySelectorAll('.lane-head').length ?? 0,
      caption: box(document.querySelector('#caption')),
      play: box(document.querySelector('#play')),
      explore: box(document.querySelector('.explore')),
      pageWidth: document.documentElement.scrollWidth,
    };
  });

const inside = (b, s) => b && b.top >= 0 && b.bottom <= s.height && b.left >= 0 && b.right <= s.width;

for (const [size, viewport] of SIZES) {
  for (const [name, path] of VIEWS) {
    test(`at ${viewport.width}x${viewport.height}, ${name}: the diagram, the caption and the play button are on the first screen`, async () => {
      const page = await env.context.newPage();
      await page.setViewportSize(viewport);
      const problems = [];
      page.on('pageerror', (err) => problems.push(err.message));
      await page.goto(env.server.origin + path);
      await page.locator('#play').waitFor({ state: 'visible', timeout: 20_000 });
      await page.locator('#diagram-main .tick-label').first().waitFor();
      if (name === 'course') await page.locator('#course-bar').waitFor();
      if (name === 'decide') await page.locator('.lane-button').first().waitFor();
      await page.screenshot({ path: join(OUT, `${name}-${size}.png`), animations: 'disabled' });
      const s = await firstScreen(page);
      const where = JSON.stringify(s);
      assert.equal(s.scrollY, 0, 'nothing scrolled the page');
      assert.ok(s.diagram && s.diagram.top < s.height, `the diagram starts on the first screen: ${where}`);
      assert.ok(s.heads.bottom < s.height, `the lanes' heads are on it: ${where}`);
      assert.ok(s.lanes >= 3, `the diagram has its lanes: ${s.lanes}`);
      assert.ok(s.rows >= 1 && s.height - s.heads.bottom >= ROW_PX, `rows of the lanes show below their heads: ${where}`);
      assert.ok(inside(s.caption, s), `the caption is inside the first screen: ${where}`);
      assert.ok(inside(s.play, s), `the play button is inside the first screen: ${where}`);
      assert.ok(s.pageWidth <= s.width, `the page is no wider than the window (${s.pageWidth} px)`);
      assert.ok(s.explore.top > s.diagram.top, `"Break the protocol" comes after the diagram: ${where}`);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
}

test('the story intro is one line until "More" opens it, and its whole text is always in the page', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced');
  for (const viewport of SIZES.map(([, v]) => v)) {
    await page.setViewportSize(viewport);
    const more = page.locator('#intro-more');
    const summary = more.locator('summary');
    const intro = page.locator('#story-intro');
    const lineHeight = await intro.evaluate((p) => parseFloat(getComputedStyle(p).lineHeight));
    assert.equal(await more.evaluate((d) => d.open), false);
    assert.equal(await summary.innerText(), 'More');
    // Screen readers read it all, folded or not.
    assert.match(await intro.textContent(), /GC pause.*B's totals stay\.$/);
    assert.ok((await intro.boundingBox()).height <= 1.5 * lineHeight, 'the folded intro takes a line at most');
    const folded = await page.locator('.story').boundingBox();
    await summary.click();
    assert.equal(await more.evaluate((d) => d.open), true);
    assert.equal(await summary.innerText(), 'Less');
    const open = await intro.boundingBox();
    assert.ok(open.height > 2 * lineHeight, `the open intro shows several lines: ${open.height} px`);
    assert.ok((await page.locator('.story').boundingBox()).height > folded.height, 'the card grows as it opens');
    await summary.click();
    assert.equal(await more.evaluate((d) => d.open), false);
    assert.equal(Math.round((await page.locator('.story').boundingBox()).height), Math.round(folded.height));
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('on a phone the picker folds to one line, a chip row cut at the edge fades there, and the diagram scrolled sideways stops at a lane', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=20');
  await page.setViewportSize({ width: 1440, height: 900 });
  const summary = page.locator('.pick > summary');
  assert.ok((await page.locator('#case').isVisible()) && !(await summary.isVisible()), 'a wide screen shows the fields');
  await page.setViewportSize({ width: 360, height: 740 });
  assert.ok(!(await page.locator('#case').isVisible()), 'folded on a phone');
  assert.ok((await summary.boundingBox()).height <= 50, 'the fold is one line');
  await summary.click();
  assert.ok(await page.locator('#case').isVisible(), 'a tap opens it');
  await summary.click();

  const row = page.locator('.story .modes');
  const fade = () => row.evaluate((el) => getComputedStyle(el).getPropertyValue('--fade'));
  assert.ok(await row.evaluate((el) => el.scrollWidth > el.clientWidth), 'the row of modes is cut at the edge');
  assert.equal(await fade(), '40px', 'it fades out at the edge');
  await row.evaluate((el) => el.scrollTo({ left: el.scrollWidth, behavior: 'instant' }));
  await page.waitForFunction(() => getComputedStyle(document.querySelector('.story .modes')).getPropertyValue('--fade') === '0px');

  // The diagram follows step 20's marks sideways (stepped to on this width): the lane at its
  // left edge shows whole.
  await page.click('#step-back');
  await page.click('#step-forward');
  await page.waitForTimeout(300);
  const edge = await page.locator('#diagram-main').evaluate((d) => {
    const left = d.getBoundingClientRect().left + d.clientLeft;
    const heads = [...d.querySelectorAll('.gutter-head, .lane-head')].map((h) => Math.round(h.getBoundingClientRect().left - left));
    return { scrolled: d.scrollLeft, heads };
  });
  assert.ok(edge.scrolled > 0, `the diagram scrolled sideways: ${JSON.stringify(edge)}`);
  assert.ok(edge.heads.some((x) => Math.abs(x) <= 2), `a lane starts at the box's left edge: ${JSON.stringify(edge)}`);
  assert.deepEqual(problems, []);
  await page.close();
});
