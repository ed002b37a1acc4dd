// Players that show their story before the wasm: a course-notes page with eight players, each
// holding the still `fencelab render` prints (browser-tests/course-page.mjs). Without
// JavaScript every player is its picture, caption and link; with it, each still shows at the
// player's height until the player is ready, and the player takes its place only where that
// moves nothing the reader sees (out of view, or when asked for; in view, the still says the
// player is ready); on paper every player prints its picture; a player is one Tab stop.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { DESKTOP, PHONE, launch, shot } from './harness.mjs';
import { STORIES, writeCourse } from './course-page.mjs';

let site;

before(async () => {
  site = await writeCourse();
});

after(async () => {
  if (site) await rm(site, { recursive: true, force: true });
});

/** A browser serving the page build at /notes/fencelab/ under the course at /notes/. */
async function browser(viewport, options = {}) {
  return launch(['/notes/fencelab/'], viewport, { '/notes/': site }, options);
}

/** Holds the page's module back until the returned function lets it through (with everything
 * asked for meanwhile): what a reader on a slow link has until it arrives. */
async function holdModule(page) {
  const held = [];
  let released = false;
  await page.context().route('**/*.wasm', (route) => (released ? route.continue() : held.push(route)));
  return async () => {
    released = true;
    for (const route of held.splice(0)) await route.continue();
  };
}

/** What each player's still shows: its figure's size, title, caption and link. */
const stills = (page) =>
  page.locator('fencelab-player').evaluateAll((players) =>
    players.map((p) => {
      const figure = p.querySelector('figure.fencelab-still');
      const svg = figure?.querySelector('svg[role=img]');
      const box = svg?.getBoundingClientRect();
      return {
        title: figure?.querySelector('figcaption')?.textContent ?? '',
        caption: figure?.querySelectorAll('p')[0]?.textContent ?? '',
        verdict: figure?.querySelectorAll('p')[1]?.textContent ?? '',
        link: figure?.querySelector('a')?.getAttribute('href') ?? '',
        width: box?.width ?? 0,
        height: box?.height ?? 0,
        shown: !!figure && figure.checkVisibility(),
      };
    }));

for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
  test(`without JavaScript every player shows its picture, caption and a link (${name})`, async () => {
    const env = await browser(viewport, { javaScriptEnabled: false });
    try {
      const page = await env.context.newPage();
      await page.goto(`${env.server.origin}/notes/index.html`);
      const seen = await stills(page);
      assert.equal(seen.length, STORIES.length);
      seen.forEach((s, i) => {
        const [story, variant] = STORIES[i];
        assert.ok(s.shown && s.width > 300 && s.height > 200, `player ${i}: ${JSON.stringify(s)}`);
        assert.match(s.title, /· step \d+ of \d+$/, `player ${i}`);
        assert.ok(s.caption.length > 30, `player ${i} has a caption: ${s.caption}`);
        assert.match(s.verdict, /^(Holds|Broken|Possibly broken): .*Play this story step by step$/, `player ${i}`);
        assert.match(s.link, new RegExp(`^fencelab/index\\.html#scenario=${story}&variant=${variant}`), `player ${i}`);
      });
      // A wide picture scrolls inside its figure; the page itself never scrolls sideways.
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(wide <= viewport.width, `the page is ${wide} px wide in ${viewport.width}`);
      // Without script too, a narrow box opens on the step the still shows, not on the lanes'
      // left edge.
      const opened = await page.locator('#p0 .fl-scroll').evaluate((el) => {
        const svg = el.querySelector('svg[data-position]');
        const marks = [...svg.querySelectorAll(`.mark[data-step="${svg.dataset.position - 1}"] circle`)];
        const box = el.getBoundingClientRect();
        return { left: el.scrollLeft, seen: marks.length > 0 && marks.every((m) => { const r = m.getBoundingClientRect(); return r.left >= box.left && r.right <= box.right; }) };
      });
      assert.ok(opened.seen, `the step's marks are in the box: ${JSON.stringify(opened)}`);
      assert.equal(opened.left > 0, name === 'phone', JSON.stringify(opened));
      // A picture cut at the right fades out there until it is scrolled to its end; the caption
      // shows whole.
      const pic = page.locator('#p0 .fl-scroll');
      const fade = () => pic.evaluate((el) => getComputedStyle(el).getPropertyValue('--fl-fade'));
      // The page runs no script, so its own polling cannot wait: a few frames' pause instead.
      const faded = async (want) => {
        for (let i = 0; i < 20 && (await fade()) !== want; i++) await page.waitForTimeout(50);
        assert.equal(await fade(), want);
      };
      const cut = await pic.evaluate((el) => el.scrollWidth > el.clientWidth + 1);
      if (cut) await pic.evaluate((el) => el.scrollTo({ left: 0, behavior: 'instant' }));
      await faded(cut ? '32px' : '0px');
      if (cut) {
        await pic.evaluate((el) => el.scrollTo({ left: el.scrollWidth, behavior: 'instant' }));
        await faded('0px');
      }
      assert.equal(name === 'phone', cut, 'the phone cuts the picture, the laptop does not');
      // In font sizes: about 1.2 to a line.
      const ems = await page.locator('#p0 figure p').first().evaluate((p) => p.getBoundingClientRect().height / parseFloat(getComputedStyle(p).fontSize));
      assert.ok(ems > 6 || name === 'desktop', `the whole caption shows: ${ems} em tall`);
      await shot(page, `stills-no-js-${name}`, { fullPage: false });
      await page.close();
    } finally {
      await env.close();
    }
  });

  test(`each still shows at the player's height until the player is ready; a player takes its place only where that moves nothing in view (${name})`, async () => {
    const env = await browser(viewport);
    try {
      const page = await env.context.newPage();
      const problems = [];
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      // The module is held back, so the stills are all a reader has for now.
      const release = await holdModule(page);
      await page.addInitScript(recordShifts);
      await page.goto(`${env.server.origin}/notes/index.html`);
      const first = page.locator('#p0');
      await page.waitForFunction(() => document.querySelector('#p0').shadowRoot.querySelector('iframe').src);
      assert.deepEqual(await state(first), { box: 'still', height: 640, frame: 'hidden', sign: false });
      // The still's current step is in the middle of its box, as the player shows it.
      // The still's current step is in its box, in the middle unless the box is scrolled to an end.
      // The title, caption and verdict stay in view; the diagram below them shows the current
      // step's mark, in the middle unless scrolled to an end.
      const centred = await first.evaluate((p) => {
        const box = p.shadowRoot.querySelector('.still').getBoundingClientRect();
        const pic = p.querySelector('.fl-scroll');
        const view = pic.getBoundingClientRect();
        const mark = p.querySelector('.fl-still .mark[data-step="18"]').getBoundingClientRect();
        const within = (r, o) => r.top >= o.top - 1 && r.bottom <= o.bottom + 1 && r.left >= o.left - 1 && r.right <= o.right + 1;
        const end = pic.scrollTop + pic.clientHeight >= pic.scrollHeight - 1;
        return {
          words: within(p.querySelector('figcaption').getBoundingClientRect(), box) && within(p.querySelectorAll('figure p')[1].getBoundingClientRect(), box),
          mark: within(mark, view),
          off: Math.abs(mark.top + mark.height / 2 - (view.top + view.height / 2)),
          end,
          fits: view.bottom <= box.bottom + 1,
          // The caption keeps to four lines in the box, leaving the picture its room.
          ems: (() => {
            const c = p.querySelector('figure p');
            return c.getBoundingClientRect().height / parseFloat(getComputedStyle(c).fontSize);
          })(),
          // Scrolled down to its step, the picture still names its lanes at the top of its box.
          names: [...pic.querySelectorAll('svg[aria-hidden] .head')].filter((h) => within(h.getBoundingClientRect(), view)).map((h) => h.textContent),
          scrolled: pic.scrollTop,
        };
      });
      assert.ok(centred.words && centred.mark && centred.fits && (centred.off < 20 || centred.end), JSON.stringify(centred));
      assert.ok(centred.scrolled > 0, `the picture is scrolled to its step: ${JSON.stringify(centred)}`);
      assert.ok(centred.ems <= 5.2, `the caption keeps to four lines: ${JSON.stringify(centred)}`);
      // A laptop's box shows every lane; a phone's, the lane of the step's mark with room for
      // its label, and that lane's name.
      const named = name === 'phone' ? ['db'] : ['lease authority', 'A', 'B', 'db'];
      assert.ok(named.every((n) => centred.names.includes(n)), `the lanes in view are named: ${JSON.stringify(centred)}`);
      // Only players near the screen load.
      const started = await page.locator('fencelab-player').evaluateAll((ps) => ps.map((p) => !!p.shadowRoot.querySelector('iframe').getAttribute('src')));
      assert.equal(started[0], true);
      assert.equal(started.at(-1), false, 'the last player waits until it comes near');
      const before = await page.evaluate(() => window.shifts.length);
      await release();
      // The first player is in view and its height is not the still's: it gets ready behind its
      // still, which says so in its corner and moves nothing.
      await first.locator('.enter.ready').waitFor({ timeout: 30_000 });
      const frame = await (await first.locator('iframe').elementHandle()).contentFrame();
      await frame.locator('svg.swimlanes').waitFor();
      assert.match(await frame.locator('#scrubber').getAttribute('aria-valuetext'), /^step 19 of /);
      assert.deepEqual(await state(first), { box: 'still ready', height: 640, frame: 'hidden', sign: true });
      const ready = await readySign(first);
      console.log(`# ${name}: the ready still's sign: ${JSON.stringify(ready)}`);
      assert.equal(ready.text, 'Start the player');
      assert.match(ready.name, /^Start the player: A paused worker wakes up after its lease expired \(broken\)\. Tab passes it by\.$/);
      assert.ok(ready.oneLine && ready.inCorner, 'the sign is one line in the top corner of the still\'s picture');
      assert.equal(ready.cursor, 'pointer', 'the still says it can be clicked');
      assert.deepEqual(await page.evaluate((n) => window.shifts.slice(n), before), [], 'nothing moved once the module came');
      // Every other player, as a reader scrolls down the notes: each comes near while out of
      // view, loads and takes its still's place there, so the reader finds it live.
      for (let i = 1; i < STORIES.length; i++) {
        const player = page.locator(`#p${i}`);
        assert.equal(await inView(player), false, `player ${i} is out of view before the reader scrolls to it`);
        await gone(page, i);
        assert.equal(await inView(player), false, `player ${i} took its place out of view`);
        await player.evaluate((p) => p.scrollIntoView({ block: 'end' }));
        assert.deepEqual(await state(player), { box: 'still gone', height: 0, frame: 'visible', sign: false }, `player ${i}`);
      }
      // The first player took its still's place once it was out of view.
      await first.evaluate((p) => p.scrollIntoView({ block: 'end' }));
      assert.deepEqual(await state(first), { box: 'still gone', height: 0, frame: 'visible', sign: false });
      const cls = await page.evaluate(() => window.shifts.reduce((a, b) => a + b, 0));
      console.log(`# ${name}: layout shift ${cls.toFixed(4)} over ${STORIES.length} players`);
      assert.ok(cls < 0.05, `the players moved the page: layout shift ${cls}`);
      assert.deepEqual(problems, []);
      await shot(page, `stills-live-${name}`, { fullPage: false });
      await page.close();

      // Again, the first player ready in view: a click on its still (on the phone, on its sign)
      // starts it at once with the focus in it.
      const again = await env.context.newPage();
      await again.goto(`${env.server.origin}/notes/index.html`);
      const one = again.locator('#p0');
      await one.locator('.enter.ready').waitFor({ timeout: 30_000 });
      await shot(again, `stills-ready-${name}`, { fullPage: false });
      if (name === 'phone') await one.locator('.enter.ready').click();
      else await one.locator('figure svg[role=img]').click();
      await again.waitForFunction(() => document.getElementById('p0').shadowRoot.activeElement?.localName === 'iframe', null, { timeout: 5_000 });
      assert.deepEqual(await state(one), { box: 'still gone', height: 0, frame: 'visible', sign: false });
      const tall = await one.locator('iframe').evaluate((f) => f.getBoundingClientRect().height);
      assert.ok(tall > 640 + 20, `the player is taller than its still: ${tall}`);
      assert.equal(await one.evaluate((p) => p.shadowRoot.querySelector('.enter').textContent), 'Enter the player · Tab passes it by');
      await again.close();

      // Given the player's own height, a player in view takes its still's place as soon as it is
      // ready, by itself: nothing moves.
      const given = await env.context.newPage();
      const go = await holdModule(given);
      await given.addInitScript(recordShifts);
      await given.goto(`${env.server.origin}/notes/index.html`);
      await given.locator('#p0').evaluate((p, h) => p.setAttribute('height', h), tall);
      await given.waitForFunction(() => document.querySelector('#p0').shadowRoot.querySelector('iframe').src);
      assert.equal((await state(given.locator('#p0'))).height, tall);
      const shifted = await given.evaluate(() => window.shifts.length);
      await go();
      await gone(given, 0);
      assert.equal(await inView(given.locator('#p0')), true);
      assert.deepEqual(await given.evaluate((n) => window.shifts.slice(n), shifted), [], 'nothing moved');
      assert.equal(await given.evaluate(() => document.activeElement.localName), 'body', 'the player did not take the focus');
      await given.close();
    } finally {
      await env.close();
    }
  });
}

/** Records every layout shift the browser reports that no input of the reader's caused. */
const recordShifts = () => {
  window.shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (!e.hadRecentInput) window.shifts.push(e.value);
  }).observe({ type: 'layout-shift', buffered: true });
};

/** A player's still box (its class and height), its frame's visibility, and whether its button
 * shows as the sign that the player is ready. */
const state = (el) => el.evaluate((p) => {
  const box = p.shadowRoot.querySelector('.still');
  const frame = p.shadowRoot.querySelector('iframe');
  const sign = getComputedStyle(p.shadowRoot.querySelector('.enter')).clipPath === 'none';
  return { box: box.className, height: box.getBoundingClientRect().height, frame: getComputedStyle(frame).visibility, sign };
});

/** Waits until the player `#p${i}` has taken its still's place. */
const gone = (page, i) =>
  page.waitForFunction((i) => document.querySelector(`#p${i}`).shadowRoot.querySelector('.still').className.includes('gone'), i, { timeout: 30_000 });

/** Whether any of the element is in the viewport. */
const inView = (el) => el.evaluate((p) => {
  const r = p.getBoundingClientRect();
  return r.bottom > 0 && r.top < innerHeight;
});

/** The ready sign: its words, accessible name, whether it is one line in the top corner of the
 * still's picture (off its words), and the still's cursor. */
const readySign = (el) => el.evaluate((p) => {
  const sign = p.shadowRoot.querySelector('.enter');
  const [s, box] = [sign.getBoundingClientRect(), p.querySelector('.fl-scroll').getBoundingClientRect()];
  const line = parseFloat(getComputedStyle(sign).lineHeight) || parseFloat(getComputedStyle(sign).fontSize) * 1.3;
  return {
    text: sign.textContent,
    name: sign.ariaLabel,
    oneLine: s.height < 2 * line,
    inCorner: s.top >= box.top && s.top - box.top < 20 && s.right <= box.right && box.right - s.right < 20,
    cursor: getComputedStyle(p.querySelector('figure')).cursor,
    width: Math.round(s.width),
  };
});

test('a player that gets ready above the screen takes its still\'s place without moving the text in view', async () => {
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const env = await browser(viewport);
    try {
      // With the browser's scroll anchoring, as a reader has it; and without, to show that the
      // player's new height would otherwise move the text.
      for (const anchoring of [true, false]) {
        const page = await env.context.newPage();
        const release = await holdModule(page);
        await page.addInitScript(recordShifts);
        await page.goto(`${env.server.origin}/notes/index.html`);
        if (!anchoring) await page.addStyleTag({ content: 'html{overflow-anchor:none}' });
        await page.waitForFunction(() => document.querySelector('#p0').shadowRoot.querySelector('iframe').src);
        // The reader has read past the first player, which is loading, and reads on below it.
        const text = page.locator('#p1').locator('xpath=preceding-sibling::p[1]');
        await page.evaluate(() => scrollTo(0, scrollY + document.querySelector('#p0').getBoundingClientRect().bottom + 10));
        assert.equal(await inView(page.locator('#p0')), false);
        const top = () => text.evaluate((p) => p.getBoundingClientRect().top);
        const before = { top: await top(), shifts: await page.evaluate(() => window.shifts.length) };
        assert.ok(before.top > 0 && before.top < viewport.height / 2, `the text is in view: ${before.top}`);
        await release();
        await gone(page, 0);
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const grew = (await page.locator('#p0 iframe').evaluate((f) => f.getBoundingClientRect().height)) - 640;
        const moved = (await top()) - before.top;
        const cls = await page.evaluate((n) => window.shifts.slice(n).reduce((a, b) => a + b, 0), before.shifts);
        console.log(`# ${name}, ${anchoring ? 'with' : 'without'} scroll anchoring: the player above grew ${grew} px, the text moved ${moved} px, layout shift ${cls.toFixed(4)}`);
        assert.ok(grew > 20, `the player is taller than its still: ${grew}`);
        if (anchoring) {
          assert.ok(Math.abs(moved) < 1 && cls < 0.001, `the text moved ${moved} px (layout shift ${cls})`);
        } else {
          assert.ok(Math.abs(moved - grew) < 1 && cls > 0, `without anchoring the text moves with the player: ${moved} px (layout shift ${cls})`);
        }
        await page.close();
      }
    } finally {
      await env.close();
    }
  }
});

test('the eight players fetch the module once, and on paper every player prints its picture', async () => {
  // Served as a static host serves it (GitHub Pages says max-age=600), with the browser's cache.
  const env = await browser({ width: 1000, height: 900 }, { cache: 'max-age=600' });
  try {
    const page = await env.context.newPage();
    await page.goto(`${env.server.origin}/notes/index.html`);
    // Printed before its player is ready, a player prints its still as it is; printed while its
    // player waits behind it, without the sign that it is ready.
    await page.locator('#p0 .enter.ready').waitFor({ timeout: 30_000 });
    await page.emulateMedia({ media: 'print' });
    assert.ok(await page.locator('#p7 figure svg[role=img]').isVisible());
    assert.ok(await page.locator('#p0').evaluate((p) => p.getBoundingClientRect().height >= p.querySelector('figure').getBoundingClientRect().height - 1), 'the still prints in the page\'s flow, whole');
    assert.equal(await page.locator('#p0 .enter').isVisible(), false, 'the sign is not printed');
    await page.emulateMedia({ media: 'screen' });
    // A reader scrolls down the notes: each player loads and takes its still's place out of
    // view, and the first, in view at first, once the reader has scrolled past it.
    for (let i = 1; i < STORIES.length; i++) {
      await gone(page, i);
      await page.locator(`#p${i}`).evaluate((p) => p.scrollIntoView({ block: 'end' }));
    }
    await gone(page, 0);
    const fetched = env.server.requests.filter(([, path]) => path.endsWith('.wasm')).length;
    console.log(`# the module fetched ${fetched} time(s) for ${STORIES.length} players`);
    assert.equal(fetched, 1, 'the module is fetched once for the whole page');
    await page.emulateMedia({ media: 'print' });
    const printed = await page.locator('fencelab-player').evaluateAll((players) =>
      players.map((p) => ({
        frame: getComputedStyle(p.shadowRoot.querySelector('iframe')).display,
        picture: p.querySelector('figure svg[role=img]').getBoundingClientRect().height,
        // Whole, not cut to the player's height.
        cut: p.shadowRoot.querySelector('.still').scrollHeight > p.shadowRoot.querySelector('.still').clientHeight + 1,
        background: getComputedStyle(p.querySelector('svg .bg')).fill,
      })));
    for (const [i, p] of printed.entries()) {
      assert.equal(p.frame, 'none', `player ${i} prints no frame`);
      assert.ok(p.picture > 200 && !p.cut, `player ${i} prints its whole picture: ${JSON.stringify(p)}`);
      assert.equal(p.background, 'rgb(255, 255, 255)', `player ${i} prints light`);
    }
    const pdf = await page.pdf({ format: 'A4' });
    assert.ok(pdf.length > 10_000);
    await page.close();
  } finally {
    await env.close();
  }
});

test('a click on a still starts its player with the focus in it; a player is one Tab stop, entered with Enter', async () => {
  const env = await browser({ width: 1000, height: 700 });
  try {
    const page = await env.context.newPage();
    // The module is held back until the still has been clicked.
    const release = await holdModule(page);
    await page.goto(`${env.server.origin}/notes/index.html`);
    const last = page.locator(`#p${STORIES.length - 1}`);
    await last.evaluate((p) => p.scrollIntoView());
    await last.locator('figure svg[role=img]').click();
    // Until its player is ready, the still says it is loading, where the reader clicked.
    const sign = last.locator('.enter.busy');
    assert.equal(await sign.innerText(), 'Loading the player…');
    assert.ok((await sign.boundingBox()).width > 100, 'the sign shows');
    await release();
    await page.waitForFunction((id) => document.getElementById(id).shadowRoot.activeElement?.localName === 'iframe', `p${STORIES.length - 1}`, { timeout: 30_000 });
    // From the text before a player, Tab reaches its button, then the next player's: one stop
    // each, whether its still or its player is showing.
    const focused = () => page.evaluate(() => {
      const el = document.activeElement;
      return el.localName === 'fencelab-player' ? `${el.id}: ${el.shadowRoot.activeElement?.textContent}` : el.localName;
    });
    await page.locator('#p1').evaluate((p) => p.previousElementSibling.setAttribute('tabindex', '-1'));
    await page.locator('#p1').evaluate((p) => p.previousElementSibling.focus());
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'p1: Enter the player · Tab passes it by');
    assert.match(await page.locator('#p1').evaluate((p) => p.shadowRoot.activeElement.ariaLabel),
      /^Enter the player: A paused worker wakes up after its lease expired( \(fenced\))?\. Tab passes it by\.$/);
    const button = await page.locator('#p1').evaluate((p) => {
      const [b, e] = [p.shadowRoot.activeElement.getBoundingClientRect(), p.getBoundingClientRect()];
      return { width: b.width, right: e.right - b.right, top: b.top - e.top };
    });
    assert.ok(button.width > 100, 'the button shows while focused');
    // In the top corner, off the title that starts the still and the player.
    assert.ok(Math.abs(button.right - 8) <= 1 && button.top >= 0 && button.top <= 12, JSON.stringify(button));
    await page.keyboard.press('Tab');
    // The still's box scrolls, and is no stop of its own.
    assert.match(await focused(), /^p2: Enter the player/);
    // Enter: the player takes the focus, and Tab then moves through its own controls.
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('p2').shadowRoot.activeElement?.localName === 'iframe', null, { timeout: 30_000 });
    const frame = await (await page.locator('#p2 iframe').elementHandle()).contentFrame();
    await frame.locator('#play').waitFor();
    await page.keyboard.press('Tab');
    assert.notEqual(await frame.evaluate(() => document.activeElement.localName), 'body', 'a control of the player has the focus');
    await page.close();
  } finally {
    await env.close();
  }
});

test('on a phone, where a still is taller than its box and the box scrolls, a player is still one Tab stop', async () => {
  const env = await browser(PHONE);
  try {
    const page = await env.context.newPage();
    await holdModule(page);
    await page.goto(`${env.server.origin}/notes/index.html`);
    // A first height shorter than its still, as an author may give.
    await page.locator('#p0').evaluate((p) => p.setAttribute('height', '300'));
    await page.waitForFunction(() => document.querySelector('#p0').shadowRoot.querySelector('.still').style.height === '300px');
    const scrolls = await page.locator('fencelab-player').evaluateAll((ps) =>
      ps.filter((p) => p.shadowRoot.querySelector('.still').scrollHeight > p.shadowRoot.querySelector('.still').clientHeight).length);
    assert.ok(scrolls > 0, 'some still overflows its box');
    const stops = [];
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      const at = await page.evaluate(() => {
        const el = document.activeElement;
        return el.localName === 'fencelab-player' ? `${el.id} ${el.shadowRoot.activeElement?.localName}` : el.localName;
      });
      if (at === 'body' || stops.includes(at)) break;
      stops.push(at);
    }
    const inPlayers = stops.filter((s) => s.startsWith('p'));
    assert.deepEqual(inPlayers, STORIES.map((_, i) => `p${i} button`), JSON.stringify(stops));
    await page.close();
  } finally {
    await env.close();
  }
});

test('stills of different colour schemes on one page keep their own colours, and all print light', async () => {
  const env = await browser({ width: 1000, height: 900 }, { javaScriptEnabled: false });
  try {
    const page = await env.context.newPage();
    await page.goto(`${env.server.origin}/notes/themes.html`);
    const backgrounds = () => page.evaluate(() =>
      Object.fromEntries(['light', 'dark', 'book'].map((id) => [id, getComputedStyle(document.querySelector(`#${id} svg .bg`)).fill])));
    const WHITE = 'rgb(255, 255, 255)';
    const DARK = 'rgb(22, 28, 35)';
    // The page is in mdBook's Coal theme, so the book's still is dark too.
    assert.deepEqual(await backgrounds(), { light: WHITE, dark: DARK, book: DARK });
    await page.emulateMedia({ media: 'print' });
    assert.deepEqual(await backgrounds(), { light: WHITE, dark: WHITE, book: WHITE });
    await page.close();
  } finally {
    await env.close();
  }
});

test('the page shows its name and that it is loading at once, and neither without JavaScript', async () => {
  const env = await browser({ width: 1000, height: 700 });
  try {
    const page = await env.context.newPage();
    const release = await holdModule(page);
    await page.goto(`${env.server.origin}/notes/fencelab/index.html`);
    const boot = page.locator('.boot');
    await boot.waitFor({ state: 'visible' });
    assert.equal(await page.locator('.boot [role=status]').innerText(), 'Fencelab · loading the stories…');
    // What the page is about, to read while the module arrives.
    assert.match(await boot.innerText(), /fencing token, a number the lease authority\s+raises with every grant/);
    await release();
    await page.locator('#play').waitFor({ state: 'visible', timeout: 20_000 });
    assert.equal(await boot.isVisible(), false, 'gone once the page is there');
    await page.close();
  } finally {
    await env.close();
  }
  const off = await browser({ width: 1000, height: 700 }, { javaScriptEnabled: false });
  try {
    const page = await off.context.newPage();
    await page.goto(`${off.server.origin}/notes/fencelab/index.html`);
    assert.equal(await page.locator('.boot').isVisible(), false, 'no promise of loading without JavaScript');
    assert.match(await page.locator('body').innerText(), /Fencelab needs JavaScript/);
    await page.close();
  } finally {
    await off.close();
  }
});
