// Players that show their story before the wasm: a course-notes page with eight players, each
// holding the still `fencelab render` prints (browser-tests/course-page.mjs). Without
// JavaScript every player is its picture, caption and link; with it, each still shows at the
// player's height until the player is ready and takes its place; on paper every player prints
// its picture; a player is one Tab stop.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { PHONE, launch, shot } from './harness.mjs';
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
      const svg = figure?.querySelector('svg');
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

for (const [name, viewport] of [['desktop', { width: 1440, height: 900 }], ['phone', PHONE]]) {
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
      await shot(page, `stills-no-js-${name}`, { fullPage: false });
      await page.close();
    } finally {
      await env.close();
    }
  });

  test(`each still shows at the player's height until the player is ready, then the player takes its place (${name})`, async () => {
    const env = await browser(viewport);
    try {
      const page = await env.context.newPage();
      const problems = [];
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      // The module is held back, so the stills are all a reader has for now.
      const release = await holdModule(page);
      await page.addInitScript(() => {
        window.shifts = [];
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) if (!e.hadRecentInput) window.shifts.push(e.value);
        }).observe({ type: 'layout-shift', buffered: true });
      });
      await page.goto(`${env.server.origin}/notes/index.html`);
      const first = page.locator('#p0');
      const state = (el) => el.evaluate((p) => {
        const box = p.shadowRoot.querySelector('.still');
        const frame = p.shadowRoot.querySelector('iframe');
        return { box: box.className, height: box.getBoundingClientRect().height, frame: getComputedStyle(frame).visibility };
      });
      await page.waitForFunction(() => document.querySelector('#p0').shadowRoot.querySelector('iframe').src);
      assert.deepEqual(await state(first), { box: 'still', height: 640, frame: 'hidden' });
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
        };
      });
      assert.ok(centred.words && centred.mark && centred.fits && (centred.off < 20 || centred.end), JSON.stringify(centred));
      // Only players near the screen load.
      const started = await page.locator('fencelab-player').evaluateAll((ps) => ps.map((p) => !!p.shadowRoot.querySelector('iframe').getAttribute('src')));
      assert.equal(started[0], true);
      assert.equal(started.at(-1), false, 'the last player waits until it comes near');
      await release();
      await page.waitForFunction(() => document.querySelector('#p0').shadowRoot.querySelector('.still').className.includes('gone'), null, { timeout: 30_000 });
      const frame = await (await first.locator('iframe').elementHandle()).contentFrame();
      await frame.locator('svg.swimlanes').waitFor();
      assert.match(await frame.locator('#scrubber').getAttribute('aria-valuetext'), /^step 19 of /);
      // Every player in turn, as a reader scrolls down the notes.
      for (let i = 1; i < STORIES.length; i++) {
        await page.locator(`#p${i}`).scrollIntoViewIfNeeded();
        await page.waitForFunction((i) => document.querySelector(`#p${i}`).shadowRoot.querySelector('.still').className.includes('gone'), i, { timeout: 30_000 });
      }
      const cls = await page.evaluate(() => window.shifts.reduce((a, b) => a + b, 0));
      console.log(`# ${name}: layout shift ${cls.toFixed(4)} over ${STORIES.length} players`);
      assert.ok(cls < 0.05, `the players moved the page: layout shift ${cls}`);
      assert.deepEqual(problems, []);
      await shot(page, `stills-live-${name}`, { fullPage: false });
      await page.close();
    } finally {
      await env.close();
    }
  });
}

test('the eight players fetch the module once, and on paper every player prints its picture', async () => {
  // Served as a static host serves it (GitHub Pages says max-age=600), with the browser's cache.
  const env = await browser({ width: 1000, height: 900 }, { cache: 'max-age=600' });
  try {
    const page = await env.context.newPage();
    await page.goto(`${env.server.origin}/notes/index.html`);
    // Printed before its player is ready, a player prints its still as it is.
    await page.emulateMedia({ media: 'print' });
    assert.ok(await page.locator('#p7 figure svg').isVisible());
    await page.emulateMedia({ media: 'screen' });
    for (let i = 0; i < STORIES.length; i++) {
      await page.locator(`#p${i}`).scrollIntoViewIfNeeded();
      await page.waitForFunction((i) => document.querySelector(`#p${i}`).shadowRoot.querySelector('.still').className.includes('gone'), i, { timeout: 30_000 });
    }
    const fetched = env.server.requests.filter(([, path]) => path.endsWith('.wasm')).length;
    console.log(`# the module fetched ${fetched} time(s) for ${STORIES.length} players`);
    assert.equal(fetched, 1, 'the module is fetched once for the whole page');
    await page.emulateMedia({ media: 'print' });
    const printed = await page.locator('fencelab-player').evaluateAll((players) =>
      players.map((p) => ({
        frame: getComputedStyle(p.shadowRoot.querySelector('iframe')).display,
        picture: p.querySelector('figure svg').getBoundingClientRect().height,
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
    await last.locator('figure svg').click();
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
    const width = await page.locator('#p1').evaluate((p) => p.shadowRoot.activeElement.getBoundingClientRect().width);
    assert.ok(width > 100, 'the button shows while focused');
    await page.keyboard.press('Tab');
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
    assert.equal(await boot.innerText(), 'Fencelab · loading the stories…');
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
