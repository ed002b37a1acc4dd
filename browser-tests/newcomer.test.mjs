// What a newcomer meets first: You decide at its start, the fault-length field, lost messages
// named by what they carry, the badge of a run with injected faults (page and embed), a refusal's
// caption read as the fence working, and the course's start, watched stories and end. Like every
// browser test, each fails on any console error, uncaught exception or failed request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { badgeLabel, launch, openPage, text } from './harness.mjs';

let env;

before(async () => {
  env = await launch(['/'], { width: 1280, height: 900 });
});

after(async () => {
  await env?.close();
});

const position = async (page) => (await text(page, '[data-testid="position"] .mono')).split('/').map(Number);
const choices = (page) => page.locator('#decide-choices button');
const faults = (page) => page.locator('#decide-faults button');
const labels = (page) => faults(page).allTextContents();

async function pick(page, locator) {
  const [at] = await position(page);
  await locator.click();
  await page.waitForFunction((at) => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith(`${at + 1}/`), at);
}

test('You decide at step 0 says to choose the first event, and counts no "0 of the 0"', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&decide=1');
  assert.deepEqual(await position(page), [0, 0]);
  const caption = await text(page, '#caption');
  assert.match(caption, /choose the first event/i);
  assert.doesNotMatch(caption, /→|press play/i, 'nothing plays by itself here');
  const at = await text(page, '#decide-at');
  assert.doesNotMatch(at, /0 of the 0/);
  assert.match(at, /^Nothing has happened yet\./);
  await pick(page, choices(page).first());
  assert.match(await text(page, '#decide-at'), /^After step 1, the last you have decided\./);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the fault length follows the field as typed, the next click acts, clocks go both ways, and a bad length says why', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&decide=1&step=9');
  assert.deepEqual(await position(page), [9, 9]);
  const field = page.locator('#fault-ticks');
  await field.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.type('5');
  // No blur yet: the labels already say 5, clocks included, and both directions are offered.
  const typed = await labels(page);
  assert.ok(typed.includes('Pause B for 5 ticks'), typed.join(' | '));
  assert.ok(typed.includes("Set B's clock 5 ticks back"), typed.join(' | '));
  assert.ok(typed.includes("Set B's clock 5 ticks ahead"), typed.join(' | '));
  assert.ok(!typed.some((l) => /11 ticks/.test(l)), typed.join(' | '));
  // The first click, which also takes focus from the field, injects what its label says.
  await page.locator('#decide-faults button', { hasText: "Set B's clock 5 ticks back" }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('10/'));
  assert.match(await text(page, '#caption'), /B's clock jumps back 5 ticks/);
  await field.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.type('3');
  await page.locator('#decide-faults button', { hasText: 'Pause B for 3 ticks' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('11/'));
  // The address follows the run a moment after the step shows.
  await page.waitForFunction(() => /inject=[^&]*pause_worker\.B\.3/.test(location.hash), null, { timeout: 5000 });
  // 0 and -3 are refused next to the field; the buttons keep the last good length.
  for (const bad of ['0', '-3']) {
    await field.click();
    await page.keyboard.press('Control+a');
    await page.keyboard.type(bad);
    await page.locator('#fault-ticks-refused').waitFor();
    assert.match(await text(page, '#fault-ticks-refused'), /at least 1 tick/);
    assert.equal(await field.getAttribute('aria-invalid'), 'true');
    assert.ok((await labels(page)).includes('Pause B for 3 ticks'));
  }
  await page.keyboard.press('Control+a');
  await page.keyboard.type('4');
  assert.equal(await page.locator('#fault-ticks-refused').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a lost message is named by what it carries, in the panel and on the diagram', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&decide=1');
  const lose = faults(page).filter({ hasText: /^Lose / });
  let names = [];
  const wanted = () => names.some((n) => /^Lose B's write \(".+"\) in flight$/.test(n)) && names.some((n) => /^Lose the grant to [AB] \(g\d+\)/.test(n));
  for (let i = 0; i < 40 && !wanted(); i++) {
    names = [...new Set([...names, ...(await lose.allTextContents())])];
    if (!wanted()) await pick(page, choices(page).first());
  }
  assert.ok(wanted(), names.join(' | '));
  assert.ok(!names.some((n) => /message \d/.test(n)), names.join(' | '));
  for (let i = 0; i < 40 && (await lose.count()) === 0; i++) await pick(page, choices(page).first());
  await pick(page, lose.first());
  const mark = page.locator('.swimlanes .mark.lost .mark-label').first();
  assert.match(await mark.textContent(), /^(grant|write|retry|effect) lost$/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a run with an injected fault says so in its badge, on the page and in its embed', async () => {
  const path = 'scenario=paused-worker&variant=fenced&inject=13.lose_message.3&decide=1&step=20';
  const { page, problems } = await openPage(env, `/#${path}`);
  assert.equal(await badgeLabel(page), 'fenced + 1 injected fault');
  const code = await page.locator('#embed-code').inputValue();
  const src = code.match(/src="[^"#]*#([^"]+)"/)[1].replace(/&amp;/g, '&');
  assert.match(src, /inject=13\.lose_message\.3/);
  const embed = await openPage(env, `/#${src}`, '#story-title');
  assert.equal(await badgeLabel(embed.page), 'fenced + 1 injected fault');
  assert.deepEqual(embed.problems, []);
  await embed.page.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test("the fence's refusal reads as the fence working, a broken invariant as bad", async () => {
  const colour = (page, value) =>
    page.evaluate((value) => {
      const probe = document.createElement('span');
      probe.style.color = value;
      document.body.append(probe);
      const c = getComputedStyle(probe).color;
      probe.remove();
      return c;
    }, value);
  const bar = (page) => page.locator('#caption').evaluate((c) => getComputedStyle(c).borderLeftColor);
  const fenced = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=19');
  assert.equal(await fenced.page.locator('#caption').getAttribute('data-kind'), 'rejected');
  assert.equal(await bar(fenced.page), await colour(fenced.page, 'var(--ok)'));
  assert.notEqual(await bar(fenced.page), await colour(fenced.page, 'var(--bad)'));
  const broken = await openPage(env, '/#scenario=paused-worker&variant=broken&step=19');
  assert.equal(await broken.page.locator('#caption').getAttribute('data-kind'), 'violation');
  assert.equal(await bar(broken.page), await colour(broken.page, 'var(--bad)'));
  for (const { page, problems } of [fenced, broken]) {
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('inside the course: no invitation to start it, a watched story says so, and the last chapter ends the course', async () => {
  const { page, problems } = await openPage(env, '/#course=the-paused-worker');
  await page.locator('#course-bar').waitFor();
  assert.equal(await page.locator('#course-toggle').count(), 0, 'the course bar has the contents');
  // End stops at the first question on the way; only seeking past it reaches the end.
  await page.keyboard.press('End');
  await page.locator('#quiz-question').waitFor({ timeout: 5_000 });
  assert.doesNotMatch(await text(page, '.quiz-count'), /watched/);
  await page.locator('#scrubber').fill(await page.locator('#scrubber').getAttribute('max'));
  await page.locator('.quiz-count', { hasText: /^watched, 0 of \d+ answered$/ }).waitFor({ timeout: 5_000 });
  assert.equal(await page.locator('#course-end').count(), 0, 'not the last chapter');
  const last = await openPage(env, '/#course=when-not-to-fence');
  await last.page.locator('#course-end').waitFor();
  assert.match(await text(last.page, "#course-end"), /end of the course/);
  assert.match(await text(last.page, '#course-end'), /You decide/);
  assert.equal(await last.page.locator('#course-next').count(), 0);
  // Outside the course the invitation is back.
  const outside = await openPage(env, '/#scenario=paused-worker');
  assert.equal(await outside.page.locator('#course-toggle').count(), 1);
  for (const p of [last, outside]) {
    assert.deepEqual(p.problems, []);
    await p.page.close();
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('the words a learner reads: the fresh register is named, its fenced run is a limit, the lanes and hints say what is true', async () => {
  for (const size of [{ width: 1440, height: 900 }, { width: 360, height: 740 }]) {
    const { page, problems } = await openPage(env, '/#scenario=fresh-register&variant=fenced');
    await page.setViewportSize(size);
    assert.match(await text(page, '#story-title'), /The fresh register: a stale write that arrives first is accepted/);
    // Before anything happened, the authority has granted nothing, and says so in words.
    assert.equal(await text(page, '[data-lane="authority"] .status-line'), 'no lease granted yet');
    assert.match(await text(page, 'main'), /Press play, or step forward \(the → key on a keyboard\), to start/);
    await page.click('#to-end');
    // Every protection on and still broken: a limit of fencing, not fencing switched off.
    assert.equal(await badgeLabel(page), 'fenced · a limit of fencing');
    assert.match(await text(page, '[data-lane="authority"] .status-line'), /^g\d+(, lease over| → \w+)$/);
    assert.deepEqual(problems, []);
    await page.close();
  }
});
