// Learning: "Predict the outcome" stops the player at a story's checkpoints, asks, says whether
// the reader was right and plays the step whose caption explains it; the guided course lists
// its chapters, remembers progress across a reload and opens a chapter from its link. The
// answers expected here are the core's (`tests/it/checkpoints.rs` prints them).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { launch, openPage, shot, text } from './harness.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let env;

before(async () => {
  env = await launch(['/'], { width: 1280, height: 900 });
});

after(async () => {
  await env?.close();
});

/** Each test starts with nothing remembered (the browser profile is shared within this file). */
async function fresh(path, ready) {
  const opened = await openPage(env, path, ready);
  await opened.page.evaluate(() => localStorage.clear());
  await opened.page.reload();
  await opened.page.locator(ready ?? '#play').waitFor();
  return opened;
}

/** Presses "Step forward" until the question shows (at most `limit` times). */
async function forwardToQuestion(page, limit = 30) {
  const question = page.locator('#quiz-question');
  for (let i = 0; i < limit && !(await question.isVisible()); i++) await page.click('#step-forward');
  await question.waitFor();
}

/** The caption's step number (`#15 · t=…` gives 15). */
const captionStep = async (page) => Number((await text(page, '#caption .step-no')).match(/#(\d+)/)[1]);

/** The serious and critical violations axe finds, in the light and the dark theme. */
async function axe(page, label) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const found = [];
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
    await page.waitForTimeout(100);
    const results = await page.evaluate(() =>
      window.axe.run(document, { resultTypes: ['violations'], runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
    );
    for (const v of results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
      found.push(`${label}, ${colorScheme}: ${v.id}: ${v.help}; ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

test('two checkpoints at one step: asked in turn, then the step plays and explains both; the outcome waits', async () => {
  const { page, problems } = await fresh('/#scenario=paused-worker&variant=fenced&quiz=1');
  // The intro sets the scene; how the run ends is held back while the reader predicts it.
  assert.doesNotMatch(await text(page, '#story-intro'), /refuses|B's totals stay/);
  assert.equal(await page.locator('#story-outcome').count(), 0);
  await forwardToQuestion(page);
  // The player stops just before step 19, where A's stale write reaches db: it settles both
  // whether the write applies and which value is final, so both are asked here, the write first.
  assert.equal(await text(page, '#quiz-question legend'), 'Will db apply A\'s write "A: total=90 (from stale inputs)"?');
  assert.equal(await captionStep(page), 18);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'quiz-question');
  assert.match(await text(page, '#quiz-status'), /stopped for a question: Will db apply/);
  // Stepping forward does not pass an unanswered question.
  await page.click('#step-forward');
  assert.equal(await captionStep(page), 18);
  await shot(page, 'learn-question');
  const axeFound = await axe(page, 'a question open');

  await page.locator('#quiz .option', { hasText: 'Yes: the write is applied' }).click();
  // The second question comes at once, before the step that would give it away.
  await page.locator('#quiz-question legend', { hasText: 'Which value will db hold when the run ends?' }).waitFor();
  assert.equal(await captionStep(page), 18);
  assert.match(await text(page, '#quiz-question .muted'), /Step 19 answers this one and the one before/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'quiz-question');
  // db already holds a value, so "nothing" is no option.
  assert.equal(await page.locator('#quiz .option', { hasText: 'nothing' }).count(), 0);
  await page.locator('#quiz .option', { hasText: 'B: total=120' }).click();

  await page.locator('#quiz.wrong').waitFor();
  assert.equal(await text(page, '#quiz-feedback'), '1 of 2 right');
  assert.equal(await captionStep(page), 19);
  const verdicts = await page.locator('#quiz .verdict').allTextContents();
  assert.equal(verdicts.length, 2);
  assert.match(verdicts[0], /^Not quite: Will db apply .* You said “Yes: the write is applied”; the answer is “No: the write is refused”\./);
  assert.match(verdicts[1], /^Right: Which value will db hold when the run ends\? B: total=120\.$/);
  assert.match(await text(page, '#quiz-status'), /^Not quite: Will db apply .*the answer is “No: the write is refused”\. Right: Which value/);
  // The caption just above the card, the engine's own of the step just played, explains both;
  // the card does not repeat it.
  assert.match(await text(page, '#caption p'), /^#19 · t=\d+\s*\S.*(reject|refuse|stale)/i);
  assert.equal(await page.locator('#quiz').getByText(/refuse|reject/i).count(), 1, 'the card says it once, in its verdict');
  assert.equal(await page.locator('#quiz-continue').getAttribute('aria-describedby'), 'caption');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'quiz-continue');
  assert.equal(await text(page, '.quiz-count'), '2 of 2 answered');
  // Every question answered: the outcome is told.
  assert.match(await text(page, '#story-outcome'), /refuses A's late write/);
  await shot(page, 'learn-feedback-wrong');

  // Answered questions are not asked again; "Reset my answers" asks them again.
  await page.click('#quiz-continue');
  await page.click('#to-start');
  for (let i = 0; i < 20; i++) await page.click('#step-forward');
  assert.equal(await page.locator('#quiz').count(), 0);
  await page.click('#quiz-reset');
  await page.click('#to-start');
  assert.equal(await page.locator('#story-outcome').count(), 0);
  await forwardToQuestion(page);
  assert.equal(await captionStep(page), 18);
  assert.deepEqual(axeFound, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('in a check-then-write store the write question waits for the write itself, not the check', async () => {
  const { page, problems } = await fresh('/#course=the-fence');
  await forwardToQuestion(page);
  assert.equal(await text(page, '#quiz-question legend'), 'Will db apply A\'s write "A: stale"?');
  // The step before is not A's check: the question stops before the separate write lands.
  const step = await captionStep(page);
  await page.locator('#quiz .option', { hasText: 'Yes: the write is applied' }).click();
  await page.locator('#quiz-question legend', { hasText: 'Which value will db hold' }).waitFor();
  await page.locator('#quiz .option', { hasText: 'A: stale' }).click();
  await page.locator('#quiz.right').waitFor();
  assert.equal(await captionStep(page), step + 1);
  assert.match(await text(page, '#caption p'), /writes A's "A: stale" \(generation 1\) without checking again/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('autoplay and End pause at a question; seeking past it is not stopped; without the quiz nothing is asked', async () => {
  const { page, problems } = await fresh('/#scenario=payment-capture&variant=fenced&quiz=1&speed=400');
  await page.click('#play');
  await page.locator('#quiz-question').waitFor({ timeout: 15_000 });
  assert.equal(await captionStep(page), 13);
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'false');
  await page.locator('#quiz .option', { hasText: 'No: the gateway drops it' }).click();
  await page.locator('#quiz.right').waitFor();
  assert.equal(await captionStep(page), 14);
  await page.click('#quiz-continue');
  // Continuing resumes autoplay to the end.
  await page.waitForFunction(() => document.querySelector('#step-forward')?.ariaDisabled === 'true', null, { timeout: 15_000 });

  const other = await fresh('/#scenario=network-delay&variant=fenced&quiz=1');
  await other.page.click('#to-end');
  await other.page.locator('#quiz-question').waitFor();
  await other.page.click('#to-start');
  assert.equal(await other.page.locator('#quiz').count(), 0);
  await other.page.locator('#scrubber').fill(await other.page.locator('#scrubber').getAttribute('max'));
  await other.page.waitForFunction(() => document.querySelector('#step-forward')?.ariaDisabled === 'true');
  const off = await fresh('/#scenario=network-delay&variant=fenced');
  for (let i = 0; i < 14; i++) await off.page.click('#step-forward');
  assert.equal(await captionStep(off.page), 14);
  assert.equal(await off.page.locator('#quiz').count(), 0);
  assert.deepEqual([...problems, ...other.problems, ...off.problems], []);
  await Promise.all([page.close(), other.page.close(), off.page.close()]);
});

test('a question answered with the keyboard only', async () => {
  const { page, problems } = await fresh('/#scenario=idempotent-retry&variant=fenced&quiz=1');
  await page.locator('body').focus();
  for (let i = 0; i < 10 && !(await page.locator('#quiz-question').isVisible()); i++) await page.keyboard.press('ArrowRight');
  await page.locator('#quiz-question').waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'quiz-question');
  // The right answer is the third option: Tab three times, then Enter.
  for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
  assert.match(await page.evaluate(() => document.activeElement?.textContent), /^Neither/);
  await page.keyboard.press('Enter');
  await page.locator('#quiz.right').waitFor();
  // Focus lands on "Continue", which the explanation describes, so Enter goes on at once; the
  // status region says the verdict.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'quiz-continue');
  assert.equal(await page.locator('#quiz-continue').getAttribute('aria-describedby'), 'caption');
  assert.match(await text(page, '#quiz-status'), /^Right: Will db apply A's first attempt/);
  await page.keyboard.press('Enter');
  await page.locator('#quiz').waitFor({ state: 'detached' });
  // The card's focus goes to the play button, not to the page.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'play');
  assert.deepEqual(problems, []);
  await page.close();
});

test('the quiz works when local storage refuses to keep anything', async () => {
  const page = await env.context.newPage();
  const problems = [];
  page.on('pageerror', (err) => problems.push(err.message));
  await page.addInitScript(() => {
    Storage.prototype.setItem = () => {
      throw new DOMException('full', 'QuotaExceededError');
    };
  });
  await page.goto(`${env.server.origin}/#scenario=check-then-write&variant=atomic&quiz=1`);
  await page.locator('#play').waitFor();
  await forwardToQuestion(page);
  // Two questions wait at this step; answer both.
  await page.locator('#quiz .option').first().click();
  await page.locator('#quiz-question legend', { hasText: 'Which value' }).waitFor();
  await page.locator('#quiz .option').first().click();
  await page.locator('#quiz-feedback').waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});

test('the course: chapters listed, progress kept across a reload, a chapter link opens its first unfinished story', async () => {
  const { page, problems } = await fresh('/');
  await page.click('#course-toggle');
  await page.locator('#course').waitFor();
  assert.equal(await page.locator('#course .chapters > li').count(), 7);
  assert.match(await text(page, '#course .chapters > li h3'), /^1\. A lease can end.* · 0 of 3 done$/);
  await shot(page, 'learn-course');
  const axeFound = await axe(page, 'the course');

  // The first story of the first chapter, watched to its end, counts as done.
  await page.locator('#course ol ol a').first().click();
  await page.locator('#course-bar').waitFor();
  assert.match(await text(page, '#course-bar .course-where'), /story 1 of 3 · 0 of 3 done/);
  assert.equal(await page.locator('#quiz-toggle').getAttribute('aria-pressed'), 'true');
  // The chapter's intro is folded, so the diagram keeps the first screen; its summary opens it.
  assert.equal(await page.locator('#course-bar details[open]').count(), 0);
  await page.click('#course-bar .course-intro summary');
  assert.ok(await page.locator('#course-bar details[open] p').isVisible());
  // End stops at the story's question; the scrubber seeks past it to the end.
  await page.click('#to-end');
  await page.locator('#quiz-question').waitFor();
  await page.locator('#scrubber').fill(await page.locator('#scrubber').getAttribute('max'));
  await page.locator('#course-bar', { hasText: '1 of 3 done' }).waitFor();
  axeFound.push(...(await axe(page, 'a course story')));
  await page.waitForTimeout(400);
  assert.match(page.url(), /course=the-paused-worker/);

  await page.reload();
  await page.locator('#course-bar', { hasText: '1 of 3 done' }).waitFor();
  await page.click('#course-contents');
  assert.match(await text(page, '#course .chapters > li h3'), /1 of 3 done$/);
  assert.equal(await page.locator('#course .chapters > li').first().locator('li.done').count(), 1);
  assert.match(await text(page, '#course li.done'), /A paused worker wakes up after its lease expired \(broken\) ✓ done/);

  // The chapter's link opens its first unfinished story, with the chapter's intro shown.
  await page.goto(`${env.server.origin}/#course=the-paused-worker`);
  await page.locator('#course-bar', { hasText: 'story 2 of 3' }).waitFor();
  assert.equal(await page.locator('#case').inputValue(), 'paused-worker');
  assert.equal(await page.locator('[data-variant="fenced"]').getAttribute('aria-checked'), 'true');
  assert.match(await text(page, '#course-bar .course-intro p'), /^A lease promises a worker sole ownership/);
  await page.goto(`${env.server.origin}/#course=the-fence`);
  await page.locator('#course-bar', { hasText: 'story 1 of 6' }).waitFor();
  assert.equal(await page.locator('#case').inputValue(), 'check-then-write');
  await page.click('#course-next');
  await page.locator('#course-bar', { hasText: 'story 2 of 6' }).waitFor();
  assert.equal(await page.locator('[data-variant="atomic"]').getAttribute('aria-checked'), 'true');
  await page.click('#course-previous');
  await page.locator('#course-bar', { hasText: 'story 1 of 6' }).waitFor();
  await shot(page, 'learn-chapter');
  assert.deepEqual(axeFound, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('while the quiz waits for answers, the event log hides the steps to come, at both sizes', async () => {
  for (const size of [{ width: 1280, height: 900 }, { width: 360, height: 740 }]) {
    const { page, problems } = await fresh('/#scenario=paused-worker&variant=broken&quiz=1');
    await page.setViewportSize(size);
    await forwardToQuestion(page);
    const spoiler = page.locator('[data-testid="log"] .text', { hasText: /stale write was accepted/ });
    const shown = () => spoiler.evaluateAll((els) => els.filter((e) => getComputedStyle(e).visibility === 'visible').length);
    assert.ok((await spoiler.count()) > 0, 'the log lists the step to come');
    assert.equal(await shown(), 0, `the answer is hidden at ${size.width}px`);
    assert.match(await text(page, '.log-card .hint'), /stay hidden until the quiz's questions are answered/);
    // Answering every question shows the log whole.
    for (let i = 0; i < 10 && (await page.locator('.log.conceal').count()) > 0; i++) {
      if (await page.locator('#quiz-question').isVisible()) await page.locator('#quiz .option').first().click();
      else if (await page.locator('#quiz-continue').isVisible()) await page.click('#quiz-continue');
      else await page.click('#to-end');
    }
    assert.ok((await shown()) > 0, `the log shows the step once answered, at ${size.width}px`);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('on a phone the quiz card is not pinned over the diagram, and Continue can be reached', async () => {
  const { page, problems } = await fresh('/#scenario=paused-worker&variant=broken&quiz=1');
  await page.setViewportSize({ width: 360, height: 740 });
  const pinned = () => page.locator('.player').evaluate((p) => getComputedStyle(p).position);
  assert.equal(await pinned(), 'sticky', 'the player is pinned while no question shows');
  await forwardToQuestion(page);
  assert.equal(await pinned(), 'static', 'the quiz card scrolls with the page');
  await page.locator('#quiz .option').first().click();
  for (let i = 0; i < 3 && !(await page.locator('#quiz-continue').isVisible()); i++) {
    await page.locator('#quiz .option').first().click();
  }
  const go = page.locator('#quiz-continue');
  await go.scrollIntoViewIfNeeded();
  const box = await go.boundingBox();
  assert.ok(box.y >= 0 && box.y + box.height <= 740, `Continue is on screen: ${JSON.stringify(box)}`);
  // The diagram can be scrolled to while the card shows: nothing pinned covers it.
  await page.locator('.diagram').scrollIntoViewIfNeeded();
  const diagram = await page.locator('.diagram').boundingBox();
  assert.ok(diagram.y < 740 && diagram.y + diagram.height > 0, 'the diagram is on screen');
  await go.click();
  assert.equal(await pinned(), 'sticky', 'pinned again once the card has gone');
  assert.deepEqual(problems, []);
  await page.close();
});

/** Where the current step's marks, Continue and the lanes' heads are on screen. */
const answerView = (page) =>
  page.evaluate(() => {
    const diagram = document.querySelector('#diagram-main');
    const step = diagram.dataset.position - 1;
    const box = (el) => el && (({ top, bottom }) => ({ top: Math.round(top), bottom: Math.round(bottom) }))(el.getBoundingClientRect());
    return {
      height: innerHeight,
      marks: [...diagram.querySelectorAll(`.mark[data-step="${step}"]`)].map(box),
      go: box(document.querySelector('#quiz-continue')),
      heads: box(diagram.querySelector('.lane-heads')),
      player: box(document.querySelector('.player')),
      caption: box(document.querySelector('#caption')),
      focus: document.activeElement?.id,
    };
  });

for (const size of [{ width: 1440, height: 900 }, { width: 360, height: 740 }]) {
  test(`at ${size.width}x${size.height} an answer shows the step that answered it, with Continue, and Continue keeps the step in view`, async () => {
    const { page, problems } = await fresh('/#scenario=paused-worker&variant=broken&quiz=1');
    await page.setViewportSize(size);
    await forwardToQuestion(page);
    while (await page.locator('#quiz-question').isVisible()) {
      await page.locator('#quiz .option').first().click();
      await page.waitForTimeout(100);
    }
    await page.locator('#quiz-continue').waitFor();
    // The page and the diagram settle after the answer's render.
    await page.waitForTimeout(300);
    const on = (b, v) => b && b.top >= 0 && b.bottom <= v.height;
    const seen = await answerView(page);
    const where = JSON.stringify(seen);
    // The caption that explains the answer is read first: with the step's marks when both fit,
    // else at the window's top.
    assert.ok(on(seen.caption, seen), `the caption is on screen: ${where}`);
    // (8 pixels of room at either end, as the page keeps.)
    const fits = Math.max(...seen.marks.map((m) => m.bottom)) - seen.caption.top + 16 <= seen.height;
    if (fits) assert.ok(seen.marks.length > 0 && seen.marks.every((m) => on(m, seen)), `the step's marks are on screen: ${where}`);
    assert.ok(on(seen.go, seen), `Continue is on screen: ${where}`);
    assert.equal(seen.focus, 'quiz-continue');
    // Nothing pinned covers the lanes' heads: the player scrolls with the page while the card shows.
    assert.ok(seen.heads.top >= seen.player.bottom, `the lanes' heads show below the player: ${where}`);
    await page.click('#quiz-continue');
    await page.locator('#quiz').waitFor({ state: 'detached' });
    await page.waitForTimeout(300);
    const after = await answerView(page);
    assert.ok(after.marks.every((m) => on(m, after)), `the step stays on screen after Continue: ${JSON.stringify(after)}`);
    assert.equal(after.focus, 'play', 'the focus goes to the play button, not to the page');
    assert.deepEqual(problems, []);
    await page.close();
  });

  test(`at ${size.width}x${size.height} a course story's last step links to the next story where the reader is`, async () => {
    const { page, problems } = await fresh('/#course=the-paused-worker');
    await page.setViewportSize(size);
    const next = page.locator('#course-next-end');
    assert.equal(await next.count(), 0, 'not before the end');
    // The course asks its questions on the way: answer them, then go on to the end.
    for (let i = 0; i < 12 && (await page.locator('#step-forward').getAttribute('aria-disabled')) !== 'true'; i++) {
      if (await page.locator('#quiz-question').isVisible()) await page.locator('#quiz .option').first().click();
      else if (await page.locator('#quiz-continue').isVisible()) await page.click('#quiz-continue');
      else await page.click('#to-end');
      await page.waitForTimeout(100);
    }
    await next.waitFor();
    const box = await next.boundingBox();
    assert.ok(box.y >= 0 && box.y + box.height <= size.height, `on screen at the end: ${JSON.stringify(box)}`);
    const href = await next.getAttribute('href');
    assert.equal(href, await page.locator('#course-next').getAttribute('href'));
    assert.match(await next.innerText(), /^Next: /);
    await next.click();
    await page.waitForFunction((href) => location.hash === href, href);
    assert.equal(await next.count(), 0, 'the next story starts at its beginning');
    // It opens as a new page would: at the top, the focus on its title.
    await page.waitForFunction(() => document.activeElement?.id === 'story-title');
    assert.equal(await page.evaluate(() => scrollY), 0);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
