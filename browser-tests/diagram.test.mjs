// The swimlane diagram's readability and its legend, on the built page (dist/): at 1440 px the
// lanes stretch to the pane and every text is at least 12 px; the marks stacked at the breaking
// step do not overlap; a label cut to its room shows whole on hover and on focus; a 360 px phone
// keeps the natural width and scrolls to the current step's lanes; and the legend lists exactly
// the kinds of marks, messages, tokens and periods the story on screen draws.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { DESKTOP, PHONE, launch, openPage, shot } from './harness.mjs';

let env;

before(async () => {
  env = await launch(['/'], DESKTOP);
});

after(async () => {
  await env?.close();
});

const BREAK = '/#scenario=paused-worker&variant=broken&step=19';
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe's serious and critical findings inside the diagram's card. */
async function axe(page) {
  await page.addScriptTag({ path: AXE });
  const results = await page.evaluate(() =>
    window.axe.run('.diagram-card', { resultTypes: ['violations'], runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
  );
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

/** The position shown by the transport bar, e.g. "19/20". */
const position = async (page) => (await page.locator('[data-testid="position"] .mono').textContent()).trim();

/** Waits until the counter reads `want`: a key press is handled after the press returns. */
async function atPosition(page, want) {
  await page
    .waitForFunction((w) => document.querySelector('[data-testid="position"] .mono')?.textContent.trim() === w, want, { timeout: 5_000 })
    .catch(() => {});
  assert.equal(await position(page), want);
}

/** The first step (0-based, as `data-step` counts) with a broken invariant. */
const breakingStep = (page) =>
  page.locator('.mark.violation').evaluateAll((marks) => Math.min(...marks.map((m) => Number(m.dataset.step))));

/** The text a mark's label shows now: the cut or the whole text, whichever is displayed. */
const shownLabel = (mark) =>
  mark.evaluate((m) =>
    [...m.querySelector('.mark-label').childNodes]
      .filter((n) => n.nodeType === Node.TEXT_NODE || getComputedStyle(n).display !== 'none')
      .map((n) => n.textContent)
      .join(''),
  );

/** Scrolls the diagram's own scroller so the marks of `step` are in the middle. */
async function centreOn(page, step) {
  await page.locator(`.mark[data-step="${step}"]`).first().evaluate((m) => {
    const pane = m.closest('.diagram');
    const box = m.getBoundingClientRect();
    const frame = pane.getBoundingClientRect();
    pane.scrollTop += box.top - frame.top - pane.clientHeight / 2;
  });
}

test('at 1440 px the diagram fills its pane, its text is 12 px or more, and the marks at the break are whole and apart', async () => {
  const { page, problems } = await openPage(env, BREAK);
  await page.waitForTimeout(200);
  const geometry = await page.evaluate(() => {
    const pane = document.querySelector('.diagram');
    const svg = pane.querySelector('svg.swimlanes');
    const centre = (e) => {
      const r = e.getBoundingClientRect();
      return r.x + r.width / 2;
    };
    return {
      pane: pane.clientWidth,
      svg: svg.getBoundingClientRect().width,
      scale: svg.getBoundingClientRect().width / svg.viewBox.baseVal.width,
      lanes: [...svg.querySelectorAll('.lane-line')].map(centre),
      heads: [...pane.querySelectorAll('.lane-head')].map(centre),
    };
  });
  // The old diagram was a fixed 700 px in a 1,022 px pane.
  assert.ok(geometry.svg <= geometry.pane && geometry.svg >= geometry.pane - 24, JSON.stringify(geometry));
  assert.equal(geometry.scale, 1, 'the drawing is not scaled, so its font sizes are what shows');
  assert.equal(geometry.heads.length, geometry.lanes.length);
  geometry.heads.forEach((x, i) => assert.ok(Math.abs(x - geometry.lanes[i]) <= 4, `lane ${i}: head ${x}, line ${geometry.lanes[i]}`));

  // Every text on screen in the diagram and its legend is at least 12 px.
  const small = await page.evaluate(() => {
    const found = [];
    const walker = document.createTreeWalker(document.querySelector('.diagram-card'), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const element = node.parentElement;
      if (!node.textContent.trim() || element.closest('title, .sr-only') || !element.getClientRects().length) continue;
      const size = parseFloat(getComputedStyle(element).fontSize);
      if (size < 12) found.push(`${size}px: ${node.textContent.trim().slice(0, 40)}`);
    }
    return found;
  });
  assert.deepEqual(small, []);

  // The warning marks stacked on the accepted write at the breaking step: whole and apart.
  const step = await breakingStep(page);
  assert.equal(step, 18);
  await centreOn(page, step);
  const marks = await page.locator(`.mark[data-step="${step}"]`).evaluateAll((all) =>
    all.map((m) => {
      const r = m.getBoundingClientRect();
      return { kind: m.dataset.kind, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    }),
  );
  assert.ok(marks.filter((m) => m.kind === 'violation').length >= 2, JSON.stringify(marks));
  for (const [i, a] of marks.entries()) {
    for (const b of marks.slice(i + 1)) {
      const overlap = a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
      assert.ok(!overlap, `${a.kind} and ${b.kind} overlap: ${JSON.stringify([a, b])}`);
    }
  }
  const warnings = page.locator(`.mark.violation[data-step="${step}"]`);
  assert.deepEqual(
    await warnings.evaluateAll((all) => all.map((m) => m.querySelector('.mark-label').textContent)),
    ['violated: stale write accepted', 'violated: write outside lease'],
  );
  assert.equal(await page.locator(`.mark[data-step="${step}"] .clipped`).count(), 0, 'nothing cut at the break');
  assert.equal(
    await page.locator(`.mark.applied[data-step="${step}"] .mark-note`).textContent(),
    '= A: total=90 (from stale inputs)',
  );
  const write = page.locator('.arrow.write').filter({ hasText: 'stale inputs' });
  assert.equal(await write.locator('.clipped').count(), 0);
  assert.equal(await write.locator('.arrow-label').textContent(), 'write "A: total=90 (from stale inputs)"');
  await page.locator('.diagram-card').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'diagram-break-1440', { fullPage: false });
  assert.deepEqual(problems, []);
  await page.close();
});

test('at 360 px the diagram scrolls to the break, and a cut label shows whole on hover and on focus', async () => {
  const { page, problems } = await openPage(env, BREAK);
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  // Moving to the step scrolls the lanes it drew into view.
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowRight');
  const step = await breakingStep(page);
  const view = await page.evaluate((step) => {
    const pane = document.querySelector('.diagram');
    const mark = pane.querySelector(`.mark.violation[data-step="${step}"] circle`).getBoundingClientRect();
    const frame = pane.getBoundingClientRect();
    return { scrolls: pane.scrollWidth > pane.clientWidth, left: pane.scrollLeft, x: mark.x - frame.x, width: pane.clientWidth };
  }, step);
  assert.ok(view.scrolls && view.left > 0, JSON.stringify(view));
  assert.ok(view.x > 0 && view.x < view.width, `the breaking step's mark is in view: ${JSON.stringify(view)}`);

  // Cut labels, marks as buttons: still nothing for axe to object to, contrast included.
  assert.deepEqual(await axe(page), []);

  const mark = page.locator(`.mark.violation[data-step="${step}"]`).first();
  const whole = 'violated: stale write accepted';
  assert.equal(await mark.locator('.clipped').count(), 1, 'a phone has no room for the whole label');
  assert.notEqual(await shownLabel(mark), whole);
  assert.match(await shownLabel(mark), /^violated: stale .*…$/);
  // The accessible name (the mark's <title>) and the tooltip hold the whole text.
  assert.equal(await page.getByRole('button', { name: `step ${step + 1}: ${whole}`, exact: true }).count(), 1);
  assert.equal(await mark.locator('title').textContent(), `step ${step + 1}: ${whole}`);
  const applied = `step ${step + 1}: applied gen 1 → r3 = A: total=90 (from stale inputs)`;
  assert.equal(await page.getByRole('button', { name: applied, exact: true }).count(), 1);
  // Focus (a tap focuses too) shows the whole label.
  await mark.focus();
  assert.equal(await shownLabel(mark), whole);
  await centreOn(page, step);
  // The card just below the player, which sticks at the top on a phone too.
  await page.locator('.diagram-card').evaluate((e) => scrollBy(0, e.getBoundingClientRect().top - document.querySelector('.player').getBoundingClientRect().height));
  await shot(page, 'diagram-break-360', { fullPage: false });
  // So does hovering, without the focus.
  await page.locator('[data-testid="diagram"]').focus();
  assert.notEqual(await shownLabel(mark), whole);
  await mark.hover({ force: true });
  assert.equal(await shownLabel(mark), whole);
  // A message's cut label shows whole on hover.
  await page.setViewportSize(DESKTOP);
  await page.waitForTimeout(150);
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  const arrow = page.locator('.arrow.write').filter({ has: page.locator('.clipped') }).first();
  const arrowShown = () =>
    arrow.evaluate((a) =>
      [...a.querySelectorAll('.arrow-label tspan')].filter((t) => getComputedStyle(t).display !== 'none').map((t) => t.textContent).join(''),
    );
  const arrowWhole = await arrow.locator('.arrow-label .full').textContent();
  assert.notEqual(await arrowShown(), arrowWhole);
  await arrow.locator('.arrow-label').hover({ force: true });
  assert.equal(await arrowShown(), arrowWhole);
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(problems, []);
  await page.close();
});

test('at 360 px a step that only ends a pause (the worker resuming) scrolls its lane into view', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=15');
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(150);
  // Step 15 lies on db's lane, far to the right; step 16 is A waking up, on A's lane.
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowRight');
  const lane = (name) => page.evaluate((name) => {
    const pane = document.querySelector('.diagram');
    const head = [...pane.querySelectorAll('.lane-head')].find((h) => h.dataset.lane === name).getBoundingClientRect();
    const frame = pane.getBoundingClientRect();
    return { left: head.left - frame.left, right: head.right - frame.left, width: pane.clientWidth, scrolled: pane.scrollLeft };
  }, name);
  const before = await lane('worker:A');
  assert.ok(before.right <= 0 || before.left >= before.width, `A's lane is out of view at step 15: ${JSON.stringify(before)}`);
  await page.keyboard.press('ArrowRight');
  assert.match(await page.locator('#caption').innerText(), /A resumes/);
  await page.waitForTimeout(150);
  const after = await lane('worker:A');
  const middle = (after.left + after.right) / 2;
  assert.ok(middle > 0 && middle < after.width, `A's lane is in view at step 16: ${JSON.stringify(after)}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the diagram is one Tab stop: the arrow keys reach its marks, and Enter or Space jumps to their step', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=20');
  const diagram = page.locator('[data-testid="diagram"]');
  await diagram.focus();
  // Tab leaves the diagram: no mark is a stop of its own.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.closest('[data-testid="diagram"]')), null);
  const focusedMark = () => page.evaluate(() => {
    const e = document.activeElement;
    const style = getComputedStyle(e);
    return { mark: e.matches('.mark'), role: e.getAttribute('role'), step: Number(e.dataset.step), name: e.querySelector('title')?.textContent, ring: style.outlineStyle !== 'none' };
  });
  // Up from the diagram: the latest mark; up again, the ones before; down, back.
  await diagram.focus();
  await page.keyboard.press('ArrowUp');
  const latest = await focusedMark();
  assert.ok(latest.mark && latest.role === 'button' && latest.ring, JSON.stringify(latest));
  assert.match(latest.name, /^step 20: /);
  await page.keyboard.press('ArrowUp');
  const before = await focusedMark();
  assert.ok(before.mark && before.step <= latest.step, JSON.stringify(before));
  await page.keyboard.press('ArrowDown');
  assert.equal((await focusedMark()).name, latest.name);
  // Space presses a mark, and does not start playing.
  for (let i = 0; i < 40 && !(await focusedMark()).name?.startsWith('step 1:'); i++) await page.keyboard.press('ArrowUp');
  const first = await focusedMark();
  assert.match(first.name, /^step 1: gen 1 → A$/);
  await page.keyboard.press('ArrowDown');
  const next = await focusedMark();
  assert.ok(next.step > first.step);
  await page.keyboard.press(' ');
  await atPosition(page, `${next.step + 1}/20`);
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'false');
  // Enter too; marks of steps still to come are not reached.
  await diagram.focus();
  await page.keyboard.press('ArrowUp');
  assert.equal((await focusedMark()).step, next.step, 'the latest shown mark is the one just played');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Enter');
  await atPosition(page, `${first.step + 1}/20`);
  assert.deepEqual(problems, []);
  await page.close();
});

/** Stories that between them draw every kind the newcomer found unexplained, and more. */
const STORIES = [
  ['paused-worker', 'broken'],
  ['check-then-write', 'check-then-write'],
  ['idempotent-retry', 'fenced'],
  ['payment-capture', 'broken'],
  ['wall-clock-tokens', 'broken'],
  ['authority-restart', 'broken'],
  ['forged-token', 'unauthenticated'],
  ['lease-check-gap', 'broken'],
  ['network-delay', 'broken'],
];

/** The kinds the legend lists and the kinds the diagram draws, by group, sorted. */
const legendKinds = (page) =>
  page.evaluate(() => {
    const kinds = {};
    for (const item of document.querySelectorAll('.legend-item')) (kinds[item.dataset.group] ??= []).push(item.dataset.legend);
    for (const group of Object.keys(kinds)) kinds[group].sort();
    return kinds;
  });

const drawnKinds = (page) =>
  page.evaluate(() => {
    const set = (selector, attribute, skip) =>
      [...new Set([...document.querySelectorAll(`svg.swimlanes ${selector}`)].map((e) => e.getAttribute(attribute)))]
        .filter((k) => k !== skip)
        .sort();
    const kinds = {
      mark: set('.mark', 'data-kind'),
      arrow: set('.arrow', 'data-kind'),
      token: set('.arrow', 'data-token', 'lease'),
      span: set('.span', 'data-kind'),
    };
    for (const group of Object.keys(kinds)) if (!kinds[group].length) delete kinds[group];
    return kinds;
  });

test('the legend lists exactly the marks, messages, tokens and periods of the story on screen', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken');
  const seen = new Set();
  for (const [name, variant] of STORIES) {
    await page.evaluate((hash) => (location.hash = hash), `#scenario=${name}&variant=${variant}`);
    await page.waitForFunction(
      ([name, variant]) =>
        document.querySelector('#case')?.value === name &&
        document.querySelector(`[data-variant="${variant}"]`)?.getAttribute('aria-checked') === 'true',
      [name, variant],
      { timeout: 10_000 },
    );
    const before = await legendKinds(page);
    await page.click('#to-end');
    const drawn = await drawnKinds(page);
    assert.deepEqual(await legendKinds(page), drawn, `${name}/${variant}`);
    assert.deepEqual(before, drawn, `${name}/${variant}: the legend is the whole run's from the start`);
    for (const [group, kinds] of Object.entries(drawn)) for (const kind of kinds) seen.add(`${group}:${kind}`);
    // Each mark's sample in the legend is the glyph the diagram draws for it.
    const glyphs = await page.evaluate(() =>
      [...document.querySelectorAll('.legend-item[data-group="mark"]')].map((item) => {
        const kind = item.dataset.legend;
        const drawn = document.querySelector(`svg.swimlanes .mark[data-kind="${kind}"] .glyph`);
        return [kind, item.querySelector('path').getAttribute('d') === drawn.getAttribute('d')];
      }),
    );
    for (const [kind, same] of glyphs) assert.ok(same, `${name}: the legend's ${kind} glyph is the diagram's`);
  }
  for (const kind of ['mark:read', 'mark:busy', 'arrow:effect', 'token:wall_clock', 'token:forged', 'mark:checked', 'mark:restarted', 'mark:lease_checked', 'mark:replayed', 'mark:slowed', 'mark:delivered']) {
    assert.ok(seen.has(kind), `no story here draws ${kind}: ${[...seen].join(', ')}`);
  }
  await page.locator('.legend').scrollIntoViewIfNeeded();
  await shot(page, 'legend-network-delay', { fullPage: false });
  assert.deepEqual(problems, []);
  await page.close();
});
