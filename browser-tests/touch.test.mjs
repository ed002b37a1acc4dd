// On a 360x740 touch screen (a phone, emulated: touch events, a coarse pointer, a mobile
// viewport), every visible control is a touch target of at least 44 by 44 CSS pixels; the
// diagram scrolls sideways and down under a swipe while the play button stays on screen; and
// nothing stops the reader zooming in (the viewport's limits, touch-action).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage } from './harness.mjs';

const PHONE = { width: 360, height: 740 };
const TARGET = 44;

let env;

before(async () => {
  env = await launch(['/'], PHONE, {}, { hasTouch: true, isMobile: true });
});

after(async () => {
  await env?.close();
});

/**
 * Every visible interactive element on the whole page (not only the first screen) smaller than
 * 44 px either way, described so the failure names it. Exempt, as WCAG 2.5.8 exempts them: a
 * link inside a sentence or a line of text (a paragraph or a list item holding other text), whose
 * size the line sets. A checkbox or a visually hidden file input is measured by its label, which
 * takes the tap for it; the diagram's and the log's scrolling boxes and text areas are far larger
 * than a finger and are not listed.
 */
const smallTargets = (page) =>
  page.evaluate((target) => {
    const selector = [
      'a[href]', 'button', 'input:not([type="hidden"])', 'select', 'summary',
      '[role="button"]', '[role="radio"]', '[role="tab"]', '[role="menuitem"]', '[tabindex]:not([tabindex="-1"])',
    ].join(',');
    const inline = (a) => {
      if (a.tagName !== 'A') return false;
      const block = a.closest('p, li');
      return block !== null && block.textContent.trim().length > a.textContent.trim().length;
    };
    const name = (el) => {
      const id = el.id ? `#${el.id}` : '';
      const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
      const label = (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40);
      return `${el.tagName.toLowerCase()}${id}${cls} "${label}"`;
    };
    const small = [];
    for (const el of document.querySelectorAll(selector)) {
      if (el.matches('.diagram, textarea, [role="region"], [role="list"]')) continue;
      if (!el.checkVisibility({ visibilityProperty: true, opacityProperty: false })) continue;
      let measured = el;
      if (el.matches('input[type="checkbox"], input[type="radio"], input[type="file"]') && el.labels?.length) {
        measured = el.labels[0];
      }
      const r = measured.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      // A visually hidden control (1x1, clipped) is reached through its label, listed itself.
      if (r.width <= 1 && r.height <= 1) continue;
      if (inline(el)) continue;
      if (r.width < target - 0.5 || r.height < target - 0.5) {
        small.push(`${name(el)}: ${Math.round(r.width * 10) / 10}x${Math.round(r.height * 10) / 10}`);
      }
    }
    return small;
  }, TARGET);

/** The scrubber thumb's size, as style.css draws it. */
const thumb = (page) =>
  page.locator('#scrubber').evaluate((input) => {
    const style = getComputedStyle(input, '::-webkit-slider-thumb');
    return [parseFloat(style.width), parseFloat(style.height)];
  });

test('on a touch screen every control on the page is at least 44x44 CSS px', async () => {
  const views = [
    ['a story, mid-run', '/#scenario=paused-worker&variant=broken&step=12'],
    ['a course story', '/#course=the-paused-worker'],
    ['"You decide" mode', '/#scenario=paused-worker&variant=fenced&decide=1&steps=6&step=6'],
    ['compare mode', '/#scenario=paused-worker&variant=fenced&compare=1'],
    ['the quiz', '/#scenario=paused-worker&variant=broken&quiz=1'],
  ];
  const found = [];
  for (const [what, path] of views) {
    const { page, problems } = await openPage(env, path);
    assert.ok(await page.evaluate(() => matchMedia('(pointer: coarse)').matches), 'the context emulates a touch screen');
    found.push(...(await smallTargets(page)).map((s) => `${what}: ${s}`));
    if (what === '"You decide" mode') {
      // A lane's menu, open, and its choices.
      await page.locator('.lane-button').first().click();
      await page.locator('.lane-menu .menu').first().waitFor();
      found.push(...(await smallTargets(page)).map((s) => `${what}, a lane's menu open: ${s}`));
    }
    if (what === 'the quiz') {
      // Play to the first question; its options and the feedback's button.
      await page.click('#play');
      await page.locator('#quiz-question').waitFor({ timeout: 20_000 });
      found.push(...(await smallTargets(page)).map((s) => `${what}, asking: ${s}`));
    }
    const [w, h] = await thumb(page);
    if (w < TARGET || h < TARGET) found.push(`${what}: the scrubber's thumb is ${w}x${h}`);
    assert.deepEqual(problems, []);
    await page.close();
  }
  assert.deepEqual(found, []);
});

test('swiping the diagram sideways and down scrolls it and keeps the play button on screen; nothing blocks zooming', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=12');
  const cdp = await env.context.newCDPSession(page);
  const diagram = page.locator('#diagram-main');
  const onScreen = async () => {
    const play = await page.locator('#play').boundingBox();
    return play.y >= 0 && play.y + play.height <= PHONE.height && play.x >= 0 && play.x + play.width <= PHONE.width;
  };
  const swipe = async (dx, dy) => {
    const box = await diagram.boundingBox();
    const y = Math.min(box.y + box.height / 2, box.y + 150, PHONE.height - 20);
    await cdp.send('Input.synthesizeScrollGesture', {
      x: Math.round(box.x + box.width / 2),
      y: Math.round(Math.max(y, box.y + 90)),
      xDistance: dx,
      yDistance: dy,
      gestureSourceType: 'touch',
      speed: 1200,
    });
  };
  const scroll = () => diagram.evaluate((d) => [d.scrollLeft, d.scrollTop, d.scrollWidth - d.clientWidth, scrollX]);

  let [, , wider] = await scroll();
  assert.ok(wider > 0, 'at 360 px the diagram is wider than its box');
  // Sideways: the diagram moves, the page does not.
  await swipe(-200, 0);
  let [left, , , pageX] = await scroll();
  assert.ok(left > 0, `the diagram scrolled sideways (${left} px)`);
  assert.equal(pageX, 0, 'the page itself did not scroll sideways');
  assert.ok(await onScreen(), 'the play button is on screen after a sideways swipe');

  // Page down until the diagram is under the player, which sticks; the whole box fits below it,
  // so swiping inside it scrolls the diagram without moving the page away from the controls.
  await page.evaluate(() => {
    const player = document.querySelector('.player').getBoundingClientRect();
    scrollBy(0, document.querySelector('#diagram-main').getBoundingClientRect().top - player.height);
  });
  await page.waitForTimeout(200);
  assert.ok(await onScreen(), 'the play button sticks on screen as the page scrolls to the diagram');
  const box = await diagram.boundingBox();
  const player = await page.locator('.player').boundingBox();
  assert.ok(box.y >= player.y + player.height - 1, 'the diagram is not under the player');
  assert.ok(box.y + box.height <= PHONE.height + 1, `the diagram's box fits below the player (${box.y}+${box.height})`);
  const before = await page.evaluate(() => scrollY);
  await swipe(-100, -250);
  const [, top] = await scroll();
  assert.ok(top > 0, `the diagram scrolled down (${top} px)`);
  assert.equal(await page.evaluate(() => scrollY), before, 'the page stayed where it was');
  assert.ok(await onScreen(), 'the play button is on screen after swiping the diagram down');

  // Zoom: nothing blocks it. Headless Chromium does not act on a synthesized pinch here (its
  // page scale stays 1 on any page), so this checks what would block one: the viewport's
  // limits and a touch-action that leaves pinch-zoom out.
  const meta = await page.locator('meta[name="viewport"]').getAttribute('content');
  assert.doesNotMatch(meta, /user-scalable\s*=\s*(no|0)|maximum-scale\s*=\s*1(\.0*)?\b/);
  const blocked = await diagram.evaluate((d) => {
    const found = [];
    for (let el = d; el; el = el.parentElement) {
      const t = getComputedStyle(el).touchAction;
      if (t !== 'auto' && !t.includes('pinch-zoom') && t !== 'manipulation') found.push(`${el.tagName}.${el.className}: ${t}`);
    }
    return found;
  });
  assert.deepEqual(blocked, [], 'nothing from the diagram up turns pinch-zoom off');
  assert.deepEqual(problems, []);
  await page.close();
});

test('on a phone a caption cut to its box shows a shade where there is more to read', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced');
  await page.setViewportSize({ width: 360, height: 740 });
  const caption = page.locator('.player .caption');
  const overflows = () => caption.evaluate((c) => c.scrollHeight > c.clientHeight + 1);
  for (let i = 0; i < 40 && !(await overflows()); i++) await page.click('#step-forward');
  assert.ok(await overflows(), 'some caption is longer than its box');
  // Covers that scroll with the text over shades that stay at the box's edges.
  const attachment = await caption.evaluate((c) => getComputedStyle(c).backgroundAttachment);
  assert.equal(attachment, 'local, local, scroll, scroll, scroll');
  assert.equal(await caption.evaluate((c) => getComputedStyle(c).overflowY), 'auto');
  assert.deepEqual(problems, []);
  await page.close();
});
