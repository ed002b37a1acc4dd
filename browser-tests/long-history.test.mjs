// Long recorded histories: a 100,000-entry history (generated now by the command line, see
// long-history.mjs) opens whole, saying so while it opens; the page draws only what is on
// screen, so it holds as many elements as for a 1,000-entry history; every entry is reachable by
// scrubbing, scrolling, big jumps and fast speeds; the findings are marked under the scrubber
// with touch-sized marks that never overlap; counts have thousands separators; the SVG export
// holds the part drawn; and a 200-worker history folds its lanes away.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PHONE, launch, openPage, shot, text } from './harness.mjs';
import { longHistory } from './long-history.mjs';

let env;
let dir;
const files = {};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fencelab-long-'));
  // The histories are served at /long/ too, for links and embeds.
  env = await launch(['/'], { width: 1440, height: 900 }, { '/long/': dir });
  for (const events of [1_000, 100_000]) {
    files[events] = join(dir, `history-${events}.jsonl`);
    await writeFile(files[events], await longHistory(events));
  }
  files.wide = join(dir, 'history-200-workers.jsonl');
  await writeFile(files.wide, await longHistory(1_000, 200));
});

after(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Where the player is and how far it goes, read from the counter ("5,000/100,000"). */
const position = async (page) =>
  (await text(page, '[data-testid="position"] .mono')).split('/').map((n) => Number(n.replaceAll(',', '')));

/** The position once the counter shows `want`'s step: a key's seek renders on a later task, so
 * the counter is read after it has had up to five seconds to get there. */
async function positionAfter(page, want) {
  await page
    .waitForFunction(
      (step) => document.querySelector('[data-testid="position"] .mono')?.textContent.replaceAll(',', '').startsWith(`${step}/`),
      want[0],
      { timeout: 5000 },
    )
    .catch(() => {});
  return position(page);
}

async function open(page, file) {
  await page.setInputFiles('#open-history', file);
  await page.waitForFunction((name) => document.querySelector('#story-title')?.textContent.includes(name), basename(file), {
    timeout: 60_000,
  });
  // Keys go to the page once focus has left the file input for the title.
  await page.waitForFunction(() => document.activeElement?.id === 'story-title');
}

/** How much of the history the page holds: all its elements, the log's rows, the diagram's. */
const held = (page) =>
  page.evaluate(() => ({
    elements: document.getElementsByTagName('*').length,
    rows: document.querySelectorAll('[data-testid="log"] .entry').length,
    drawn: document.querySelectorAll('svg.swimlanes *').length,
  }));

/** Moves the scrubber to `to`, as a reader dragging it does. */
const scrub = (page, to) =>
  page.locator('#scrubber').evaluate((input, to) => {
    input.value = String(to);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, to);

test('a 100,000-entry history opens whole, and the page holds no more of it than of a 1,000-entry one', async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[1_000]);
  assert.deepEqual(await position(page), [0, 1_000]);
  const short = await held(page);
  await open(page, files[100_000]);
  assert.deepEqual(await position(page), [0, 100_000]);
  assert.match(await text(page, '[data-testid="history-card"] .intro'), /^100,000 entries recorded/);
  // Counts have thousands separators, on screen and for screen readers.
  assert.equal(await text(page, '[data-testid="position"] .mono'), '0/100,000');
  assert.match(await page.locator('#scrubber').getAttribute('aria-valuetext'), /^step 0 of 100,000, t=/);
  assert.match(await text(page, '#log-title .count'), /^100,000 steps$/);
  const long = await held(page);
  // The log and the diagram draw what is in view, the same for either length.
  assert.ok(long.rows <= 40 && short.rows <= 40, `log rows: ${short.rows} and ${long.rows}`);
  assert.ok(Math.abs(long.rows - short.rows) <= 8, `log rows: ${short.rows} and ${long.rows}`);
  assert.ok(long.drawn < 1_500 && short.drawn < 1_500, `diagram elements: ${short.drawn} and ${long.drawn}`);
  // The whole page stays within one bound; the long history adds only its findings (a list and
  // the marks under the scrubber), which the short one has none of.
  const findings = await page.locator('[data-testid="findings-panel"] .finding').count();
  assert.ok(findings > 0, 'the long history has findings');
  assert.ok(long.elements < 3_000 && short.elements < 3_000, `elements: ${short.elements} and ${long.elements}`);
  assert.ok(long.elements - short.elements < 12 * findings, `elements: ${short.elements} and ${long.elements}`);

  // Scrubbing to the end shows the last entries, in the log and in the diagram.
  await scrub(page, 100_000);
  assert.deepEqual(await position(page), [100_000, 100_000]);
  assert.match(await text(page, '[data-testid="caption"]'), /^#100,000 · t=\d+/);
  const last = page.locator('[data-testid="log"] .entry[data-step="99999"]');
  await last.waitFor();
  assert.match(await last.getAttribute('class'), /\bcurrent\b/);
  assert.equal(await last.getAttribute('aria-posinset'), '100000');
  assert.equal(await last.getAttribute('aria-setsize'), '100000');
  const lastMark = await page
    .locator('svg.swimlanes .mark')
    .evaluateAll((marks) => Math.max(...marks.map((m) => Number(m.dataset.step))));
  assert.ok(lastMark >= 99_990, `the diagram's last mark is at step ${lastMark}`);
  await shot(page, 'history-100k-end');

  // Scrolling the log, without moving the player, reaches any entry.
  await page.locator('[data-testid="log"]').evaluate((log) => {
    log.scrollTop = 50_000 * 30;
  });
  await page.locator('[data-testid="log"] .entry[data-step="50000"]').waitFor();
  assert.deepEqual(await position(page), [100_000, 100_000]);
  assert.ok((await held(page)).rows <= 60, 'the scrolled log lists what is in view');
  // And clicking one goes there.
  await page.locator('[data-testid="log"] .entry[data-step="50000"] button').click();
  assert.deepEqual(await position(page), [50_001, 100_000]);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a long history's findings are marked under the scrubber, and a mark goes to its finding", async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[100_000]);
  const findings = await page.locator('[data-testid="findings-panel"] .finding').count();
  const marks = page.locator('.scrub-marks .scrub-mark');
  // The marks are laid out once the scrubber's width is measured, a render after the findings.
  await marks.first().waitFor({ timeout: 5000 }).catch(() => {});
  const count = await marks.count();
  assert.ok(count > 0 && count <= findings, `${count} marks for ${findings} findings`);
  // Described to screen readers, and each mark named by its step and what broke.
  const described = await page.locator('#scrubber').getAttribute('aria-describedby');
  // It counts the marks when findings close together share them.
  const shared = count < findings ? ` by ${count.toLocaleString('en-US')} marks \\(findings close together share one\\)` : '';
  assert.match(
    await text(page, `#${described}`),
    new RegExp(`^${findings.toLocaleString('en-US')} findings are marked under the scrubber${shared}; the Findings list names each\\.$`),
  );
  for (const label of await marks.evaluateAll((ms) => ms.map((m) => m.getAttribute('aria-label')))) {
    assert.match(label, /^(step [\d,]+: [a-z ]+|\d+ findings at steps? [\d,]+( to [\d,]+)?, the first: [a-z ]+( at step [\d,]+)?)$/);
  }
  // Marks sit in order along the scrubber, where the player shows their steps.
  const steps = await marks.evaluateAll((ms) => ms.map((m) => Number(m.dataset.step)));
  assert.deepEqual(steps, [...steps].sort((a, b) => a - b));
  const at = await marks.evaluateAll((ms) => ms.map((m) => m.getBoundingClientRect().left));
  assert.ok(at.every((x, i) => i === 0 || x >= at[i - 1]), 'marks left to right');

  const mark = marks.nth(Math.floor(count / 2));
  const step = Number(await mark.getAttribute('data-step'));
  const finding = Number(await mark.getAttribute('data-finding'));
  await mark.click();
  assert.deepEqual(await position(page), [step + 1, 100_000]);
  const chosen = page.locator('[data-testid="findings-panel"] .finding.chosen');
  assert.equal(await chosen.count(), 1);
  assert.equal(Number(await chosen.getAttribute('data-step')), step);
  assert.equal(await page.locator('[data-testid="findings-panel"] .finding').nth(finding).getAttribute('class'), await chosen.getAttribute('class'));
  // The diagram draws the finding's own mark, highlighted, and the log its entry.
  await page.locator(`svg.swimlanes .mark.violation.witness[data-step="${step}"]`).waitFor();
  await page.locator(`[data-testid="log"] .entry.current[data-step="${step}"]`).waitFor();
  await shot(page, 'history-100k-finding');
  assert.deepEqual(problems, []);
  await page.close();
});

test('opening a long history says so while it opens, then moves focus to its title and announces it; going back does too', async () => {
  const { page, problems } = await openPage(env, '/');
  // Every text the status line shows, and whether it could be seen, recorded as it changes.
  await page.evaluate(() => {
    window.said = [];
    const status = document.querySelector('#page-status');
    new MutationObserver(() => {
      window.said.push({ text: status.textContent, shown: status.classList.contains('notice') });
    }).observe(status, { childList: true, characterData: true, subtree: true, attributes: true });
  });
  assert.equal(await page.locator('#page-status').getAttribute('role'), 'status');
  await open(page, files[100_000]);
  const said = await page.evaluate(() => window.said);
  const opening = said.find((s) => s.text.startsWith('Opening'));
  assert.match(opening?.text ?? '', /^Opening history-100000\.jsonl \(\d+\.\d MB\)…$/, JSON.stringify(said));
  assert.ok(opening.shown, 'the opening status is visible');
  assert.match(await text(page, '#page-status'), /^Opened history-100000\.jsonl: 100,000 entries, [\d,]+ findings?\.$/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'story-title');
  await page.click('#close-history');
  await page.locator('#case').waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'story-title');
  assert.match(await text(page, '#page-status'), /^Back to the stories: /);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a long run plays fast, jumps a tenth with Page Up/Down and Shift+arrows, and the keys are listed', async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[100_000]);
  assert.match(await text(page, '#keys-help'), /Shift\+← → or Page Up\/Down jump a tenth of the run \(Page Down forward\)/);
  await page.keyboard.press('PageDown');
  assert.deepEqual(await positionAfter(page, [10_000, 100_000]), [10_000, 100_000]);
  await page.keyboard.press('Shift+ArrowRight');
  assert.deepEqual(await positionAfter(page, [20_000, 100_000]), [20_000, 100_000]);
  await page.keyboard.press('PageUp');
  assert.deepEqual(await positionAfter(page, [10_000, 100_000]), [10_000, 100_000]);
  await page.keyboard.press('Shift+ArrowLeft');
  await page.keyboard.press('Shift+ArrowLeft');
  assert.deepEqual(await positionAfter(page, [0, 100_000]), [0, 100_000]);
  // With the scrubber focused (after dragging it), the same keys do the same; its plain arrows
  // step one, and Space plays and pauses.
  await page.locator('#scrubber').focus();
  await page.keyboard.press('PageDown');
  assert.deepEqual(await positionAfter(page, [10_000, 100_000]), [10_000, 100_000]);
  await page.keyboard.press('Shift+ArrowRight');
  assert.deepEqual(await positionAfter(page, [20_000, 100_000]), [20_000, 100_000]);
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await positionAfter(page, [20_001, 100_000]), [20_001, 100_000]);
  await page.keyboard.press('PageUp');
  assert.deepEqual(await positionAfter(page, [10_001, 100_000]), [10_001, 100_000]);
  await page.keyboard.press('Shift+ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual(await positionAfter(page, [0, 100_000]), [0, 100_000]);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'scrubber');
  await page.keyboard.press('Space');
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'true');
  await page.keyboard.press('Space');
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'false');
  await page.keyboard.press('Home');
  assert.deepEqual(await position(page), [0, 100_000]);
  // The fastest speed takes 40 steps at each tick of the timer (800 steps a second).
  const speeds = await page.locator('#speed option').allTextContents();
  assert.ok(speeds.includes('640×'), speeds.join(', '));
  await page.selectOption('#speed', { label: '640×' });
  await page.click('#play');
  await page.waitForFunction(() => !document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('0/'));
  await page.click('#play');
  const [at] = await position(page);
  assert.ok(at >= 40 && at % 40 === 0, `played ${at} steps, 40 at each tick`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('at the end, Space keeps the place and Play says it replays from the start', async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[1_000]);
  await page.keyboard.press('End');
  assert.deepEqual(await position(page), [1_000, 1_000]);
  const play = page.locator('#play');
  assert.equal(await play.getAttribute('aria-label'), 'Replay from start (Enter)');
  await page.locator('body').focus();
  await page.keyboard.press('Space');
  assert.deepEqual(await position(page), [1_000, 1_000]);
  assert.equal(await play.getAttribute('aria-label'), 'Replay from start (Enter)');
  // Space on the focused button keeps the place too; Enter replays, as a click does.
  await play.focus();
  await page.keyboard.press('Space');
  await page.waitForTimeout(300);
  assert.deepEqual(await position(page), [1_000, 1_000]);
  assert.equal(await play.getAttribute('aria-pressed'), 'false');
  await page.keyboard.press('Enter');
  assert.equal(await play.getAttribute('aria-label'), 'Pause (Space)');
  await page.keyboard.press('Space');
  assert.equal(await play.getAttribute('aria-label'), 'Play (Space)');
  let [at] = await position(page);
  assert.ok(at < 20, `replayed from the start, now at ${at}`);
  await page.keyboard.press('End');
  await play.click();
  assert.equal(await play.getAttribute('aria-label'), 'Pause (Space)');
  await play.click();
  [at] = await position(page);
  assert.ok(at < 20, `replayed from the start, now at ${at}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('Space after clicking a log row plays and pauses, and a cut row shows its whole text', async () => {
  const { page, problems } = await openPage(env, '/');
  await page.setViewportSize(PHONE);
  await open(page, files[1_000]);
  const row = page.locator('[data-testid="log"] .entry[data-step="4"] button');
  await row.click();
  assert.deepEqual(await position(page), [5, 1_000]);
  await page.keyboard.press('Space');
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'true');
  await page.keyboard.press('Space');
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'false');
  const [at] = await position(page);
  assert.ok(at >= 5, `kept playing from the row, at ${at}`);
  // Enter on the row still goes to it.
  await row.focus();
  await page.keyboard.press('Enter');
  assert.deepEqual(await position(page), [5, 1_000]);
  // At 360 px the row is cut with an ellipsis: its title holds the whole caption.
  const cut = await row.evaluate((b) => {
    const t = b.querySelector('.text');
    return { cut: t.scrollWidth > t.clientWidth, text: t.textContent, title: b.title };
  });
  assert.ok(cut.cut, 'the row is cut at 360 px');
  assert.equal(cut.title, cut.text);
  assert.deepEqual(problems, []);
  await page.close();
});

/** The marks under the scrubber: their boxes, and whether a tap at each centre lands on it. */
const markBoxes = (scope) =>
  scope.locator('.scrub-marks .scrub-mark').evaluateAll((marks) =>
    marks.map((m, i) => {
      // A tap can only land on what is on screen.
      if (i === 0) m.scrollIntoView({ block: 'center' });
      const r = m.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return { left: r.left, right: r.right, width: r.width, height: r.height, hits: m.contains(hit), label: m.getAttribute('aria-label') };
    }),
  );

/** Marks are 44 px wide, and as tall on a phone (`height` 44) or 24 px tall on a wider screen. */
function assertTappable(boxes, where, height = 44) {
  assert.ok(boxes.length > 0, `${where}: marks`);
  for (const b of boxes) {
    assert.ok(b.width >= 44 && b.height >= height, `${where}: a ${b.width}×${b.height} mark`);
    assert.ok(b.hits, `${where}: a tap on "${b.label}" lands on it`);
  }
  for (let i = 1; i < boxes.length; i++) {
    assert.ok(boxes[i].left >= boxes[i - 1].right - 0.5, `${where}: marks ${i - 1} and ${i} overlap`);
  }
}

test('at 360 px the finding marks are 44 px touch targets that never overlap, and a merged mark says how many', async () => {
  const { page, problems } = await openPage(env, '/');
  await page.setViewportSize(PHONE);
  await open(page, files[100_000]);
  const findings = await page.locator('[data-testid="findings-panel"] .finding').count();
  const boxes = await markBoxes(page);
  assertTappable(boxes, '360 px');
  assert.ok(boxes.length < findings, `${boxes.length} marks for ${findings} findings`);
  const counts = await page.locator('.scrub-marks .scrub-mark').evaluateAll((ms) => ms.map((m) => Number(m.dataset.count)));
  assert.equal(counts.reduce((a, b) => a + b, 0), findings);
  const merged = page.locator('.scrub-marks .scrub-mark:not([data-count="1"])').first();
  const n = Number(await merged.getAttribute('data-count'));
  assert.match(await merged.getAttribute('aria-label'), new RegExp(`^${n} findings at steps? `));
  assert.equal(await merged.locator('.mark-count').textContent(), n > 99 ? '99+' : String(n));
  // Tapping it goes to its first finding.
  const step = Number(await merged.getAttribute('data-step'));
  await merged.click();
  assert.deepEqual(await position(page), [step + 1, 100_000]);
  await shot(page, 'history-100k-marks-phone');
  assert.deepEqual(problems, []);
  await page.close();
});

test('findings at one step share a mark that says so', async () => {
  const { page, problems } = await openPage(env, '/');
  const fixture = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'possible.jsonl');
  await open(page, fixture);
  const mark = page.locator('.scrub-marks .scrub-mark');
  assert.equal(await mark.count(), 1);
  const step = Number(await mark.getAttribute('data-step'));
  assert.match(await mark.getAttribute('aria-label'), new RegExp(`^3 findings at step ${step + 1}, the first: [a-z ]+$`));
  assert.deepEqual(problems, []);
  await page.close();
});

test('a 760 px embed of a long history: its own title, tappable marks, and a description of what it shows', async () => {
  const { page, problems } = await openPage(
    env,
    '/#history=long/history-100000.jsonl&embed=controls,caption&title=Stale%20writes%20in%20a%20long%20run',
  );
  await page.setViewportSize({ width: 760, height: 700 });
  await page.locator('.scrub-marks .scrub-mark').first().waitFor({ timeout: 60_000 });
  assert.match(await text(page, '#story-title'), /^Stale writes in a long run(?!.*History)/);
  assertTappable(await markBoxes(page), '760 px embed', 24);
  // The embed has no Findings list, so the scrubber's description does not point to one.
  const described = await page.locator('#scrubber').getAttribute('aria-describedby');
  const description = await text(page, `#${described}`);
  assert.match(description, /findings? (is|are) marked under the scrubber( by [\d,]+ marks? [^.]*)?\.$/);
  assert.doesNotMatch(description, /Findings list/);
  assert.equal(await page.locator('[data-testid="findings-panel"]').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a long history's token pills fit four-digit generations", async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[100_000]);
  await scrub(page, 100_000);
  await page.locator('svg.swimlanes .arrow .token').first().waitFor();
  const pills = await page.locator('svg.swimlanes .arrow .token').evaluateAll((tokens) =>
    tokens.map((t) => ({ text: t.querySelector('text').textContent, label: t.querySelector('text').getBBox().width, pill: t.querySelector('rect').getBBox().width })),
  );
  assert.ok(pills.some((p) => p.text.length >= 5), `four-digit generations: ${pills.map((p) => p.text).join(' ')}`);
  for (const p of pills) assert.ok(p.pill >= p.label + 6, `${p.text}: a ${p.pill} px pill for ${p.label} px of text`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a long history's SVG export holds only the part drawn, headed with the file, its steps and the chosen finding", async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[100_000]);
  await scrub(page, 50_000);
  await page.locator('[data-testid="log"] .entry.current[data-step="49999"]').waitFor();
  const button = page.locator('#export-svg');
  assert.equal(await button.textContent(), 'Download diagram around the view (SVG)');
  assert.match(await text(page, '#export-svg-note'), /exported around the view, as drawn there \(Steps [\d,]+ to 50,000 of 100,000\)/);
  // The transcript of a run this long says how many steps it has, with separators, and where to read them.
  assert.equal(await text(page, '#transcript summary'), 'Text transcript (100,000 steps)');
  await page.click('#transcript summary');
  assert.match(await text(page, '#transcript p'), /^This run has 100,000 steps, more than the 2,000 the transcript lists: the event log/);
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  const svg = await readFile(await download.path(), 'utf8');
  const name = basename(files[100_000]);
  const title = svg.match(new RegExp(`<title>History: ${name} · (Steps ([\\d,]+) to ([\\d,]+) of 100,000)</title>`));
  assert.ok(title, `the export is titled with its file and steps: ${svg.match(/<title>[^<]*/)}`);
  assert.ok(svg.includes(`<text class="export-title" x="8" y="16">History: ${name} · ${title[1]}</text>`), 'and shows the title');
  assert.equal(title[3], '50,000');
  // What the band holds is drawn: the marks of the steps it names.
  const [first, last] = [title[2], title[3]].map((n) => Number(n.replaceAll(',', '')) - 1);
  const steps = [...svg.matchAll(/<g (?=[^>]*class="mark[ "])[^>]*data-step="(\d+)"/g)].map((m) => Number(m[1]));
  assert.ok(steps.some((s) => s >= first && s <= last), `marks at steps ${first}..${last}`);
  assert.match(await text(page, '#share-status'), /^Downloaded the diagram around the view as SVG: Steps [\d,]+ to 50,000 of 100,000\.$/);

  // With a finding chosen, the export names it on a line of its own.
  const finding = page.locator('[data-testid="findings-panel"] .finding').first();
  await finding.locator('button').click();
  const invariant = (await finding.getAttribute('data-invariant')).replaceAll('_', ' ');
  const [chosen] = await Promise.all([page.waitForEvent('download'), button.click()]);
  // Saved with its extension, as a reader's download is, so the browser opens it as SVG.
  const path = join(dir, 'export.svg');
  await chosen.saveAs(path);
  const file = await readFile(path, 'utf8');
  assert.match(file, new RegExp(`<text class="export-title" x="8" y="36">Finding: ${invariant} at step [\\d,]+: `));

  // Opened on its own: a valid SVG document no taller than the band it names, with no empty
  // band below the last step drawn, and its labels whole.
  const viewer = await env.context.newPage();
  await viewer.goto(pathToFileURL(path).href);
  const shown = await viewer.evaluate(() => {
    const root = document.documentElement;
    const inner = root.querySelector('svg.swimlanes');
    const box = inner.viewBox.baseVal;
    const marks = [...inner.querySelectorAll('.mark circle')].map((c) => Number(c.getAttribute('cy'))).filter((y) => y >= box.y && y <= box.y + box.height);
    return {
      root: root.localName,
      errors: document.getElementsByTagName('parsererror').length,
      height: root.height.baseVal.value,
      inner: inner.height.baseVal.value,
      band: box.height,
      gap: box.y + box.height - Math.max(...marks),
      cut: [...root.querySelectorAll('text')].filter((t) => getComputedStyle(t).display !== 'none' && t.getBoundingClientRect().width > 0)
        .map((t) => [...t.childNodes].filter((n) => n.nodeType === 3 || getComputedStyle(n).display !== 'none').map((n) => n.textContent).join(''))
        .filter((t) => t.includes('…')),
      lines: [...root.querySelectorAll('text.export-title')].map((t) => t.textContent),
    };
  });
  assert.equal(shown.root, 'svg');
  assert.equal(shown.errors, 0);
  assert.equal(shown.inner, shown.band, 'the diagram inside is as tall as its band, not the whole run');
  assert.ok(shown.height > 100 && shown.height < 3_000, `the export is ${shown.height} px tall`);
  assert.ok(shown.gap <= 45, `${shown.gap} px below the last mark drawn`);
  assert.deepEqual(shown.cut, [], 'no label is cut');
  assert.equal(shown.lines.length, 2);
  await shot(viewer, 'history-100k-svg', { fullPage: false });
  await viewer.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('a 200-worker history folds its lanes under a filter, so Play comes early in the Tab order and the diagram is summarized', async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files.wide);
  const summary = page.locator('#lane-toggles summary');
  assert.equal(await summary.textContent(), 'Lanes (202 shown of 202)');
  assert.equal(await page.locator('#lane-toggles').evaluate((d) => d.open), false);
  // From the title, Play is a few Tab presses away.
  await page.locator('#story-title').focus();
  let presses = 0;
  while ((await page.evaluate(() => document.activeElement?.id)) !== 'play' && presses < 60) {
    await page.keyboard.press('Tab');
    presses++;
  }
  assert.ok(presses <= 12, `${presses} Tab presses from the title to Play`);
  const label = await page.locator('svg.swimlanes').getAttribute('aria-label');
  assert.ok(label.length < 200, `a ${label.length}-character label`);
  assert.match(label, /^Swimlane diagram, 202 lanes \([^)]+ and 196 more\), step 0 of 1,000\.$/);
  // The lane heads would be read one by one before the summary: assistive technology gets the summary.
  assert.equal(await page.locator('[data-testid="diagram"] .lane-heads').getAttribute('aria-hidden'), 'true');
  // Open, the lane chips are one Tab stop, moved through with the arrow keys.
  await summary.click();
  await summary.focus();
  presses = 0;
  while ((await page.evaluate(() => document.activeElement?.id)) !== 'play' && presses < 60) {
    await page.keyboard.press('Tab');
    presses++;
  }
  assert.ok(presses <= 12, `${presses} Tab presses from the open lane list to Play`);
  const chips = page.locator('#lane-toggles .lane-toggle');
  await chips.first().focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'w0');
  await page.keyboard.press('End');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'db');
  assert.deepEqual(await chips.evaluateAll((cs) => cs.filter((c) => c.tabIndex === 0).map((c) => c.textContent)), ['db']);
  // The filter lists workers: a whole name only that worker, part of a name every worker with it;
  // the authority and the store always stay.
  assert.match(await text(page, 'label[for="lane-filter"]'), /whole name matches only itself/);
  await page.fill('#lane-filter', 'W17');
  assert.deepEqual(await chips.allTextContents(), ['lease authority', 'w17', 'db']);
  await page.fill('#lane-filter', '17');
  assert.deepEqual(await chips.allTextContents(), ['lease authority', 'w17', 'w117', ...Array.from({ length: 10 }, (_, i) => `w17${i}`), 'db']);
  await page.fill('#lane-filter', 'w17, w3');
  await page.click('#lanes-only');
  const heads = () => page.locator('[data-testid="diagram"] .lane-head .lane-name').evaluateAll((hs) => hs.map((h) => h.textContent.trim()));
  assert.deepEqual(await heads(), ['lease authority', 'w3', 'w17', 'db']);
  assert.equal(await summary.textContent(), 'Lanes (4 shown of 202)');
  assert.match(await text(page, '#lane-filter-note'), /keeps the authority and the stores/);
  // Few lanes: the heads are a list again.
  assert.equal(await page.locator('[data-testid="diagram"] .lane-heads').getAttribute('aria-hidden'), null);
  await page.fill('#lane-filter', '');
  await page.click('#lanes-all');
  assert.equal(await page.locator('[data-testid="diagram"] .lane-head').count(), 202);
  await page.fill('#lane-filter', 'nothing like this');
  await page.click('#lanes-only');
  assert.match(await text(page, '#lane-note'), /no worker matches the filter/);
  assert.equal(await page.locator('[data-testid="diagram"] .lane-head').count(), 202);
  assert.doesNotMatch(await text(page, '#history-note'), /README/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('Space after choosing a finding, in the list or under the scrubber, plays and pauses; Enter still chooses', async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[100_000]);
  const play = page.locator('#play');
  const finding = page.locator('[data-testid="findings-panel"] .finding button').nth(1);
  await finding.click();
  const [chosen] = await position(page);
  await page.keyboard.press('Space');
  assert.equal(await play.getAttribute('aria-pressed'), 'true');
  await page.keyboard.press('Space');
  assert.equal(await play.getAttribute('aria-pressed'), 'false');
  assert.ok((await position(page))[0] >= chosen);
  await page.keyboard.press('Enter');
  assert.deepEqual(await position(page), [chosen, 100_000]);
  const mark = page.locator('.scrub-marks .scrub-mark').last();
  await mark.click();
  const [marked] = await position(page);
  assert.equal(marked, Number(await mark.getAttribute('data-step')) + 1);
  await page.keyboard.press('Space');
  assert.equal(await play.getAttribute('aria-pressed'), 'true');
  await page.keyboard.press('Space');
  assert.equal(await play.getAttribute('aria-pressed'), 'false');
  assert.deepEqual(problems, []);
  await page.close();
});

test("choosing a finding shows its lanes: the diagram's lane headers below the player, the witness's writer in view", async () => {
  // Enough rounds for the pausing workers to pause, so the history has findings.
  const wide = join(dir, 'history-200-workers-long.jsonl');
  await writeFile(wide, await longHistory(50_000, 200));
  const { page, problems } = await openPage(env, '/');
  await open(page, wide);
  const finding = page.locator('[data-testid="findings-panel"] .finding').first();
  await finding.locator('button').click();
  const step = Number(await finding.getAttribute('data-step'));
  await page.locator(`svg.swimlanes .mark.violation.witness[data-step="${step}"]`).waitFor();
  await page.waitForTimeout(200);
  const seen = await page.evaluate(() => {
    const rect = (e) => e.getBoundingClientRect();
    const box = rect(document.querySelector('[data-testid="diagram"]'));
    const heads = [...document.querySelectorAll('[data-testid="diagram"] .lane-head')].map((h) => ({
      lane: h.dataset.lane,
      left: rect(h).left,
      right: rect(h).right,
    }));
    return {
      player: rect(document.querySelector('.player')).bottom,
      findings: rect(document.querySelector('[data-testid="findings-panel"] h3')).top,
      heads: rect(document.querySelector('[data-testid="diagram"] .lane-heads')),
      box: { left: box.left, right: box.right, top: box.top },
      shown: heads.filter((h) => h.left >= box.left - 1 && h.right <= box.right + 1).map((h) => h.lane),
      scrolled: document.querySelector('[data-testid="diagram"]').scrollLeft,
      wide: document.querySelector('[data-testid="diagram"]').scrollWidth,
    };
  });
  // The lane headers and the findings' heading show below the sticky player, not under it,
  // however many lines the finding's caption takes.
  assert.ok(seen.heads.top >= seen.player, `lane headers at ${seen.heads.top}, the player ends at ${seen.player}`);
  assert.ok(seen.findings >= seen.player, `the findings' heading at ${seen.findings}, the player ends at ${seen.player}`);
  // The workers the finding names (the writers) are in view, not the lanes at the far right.
  const writers = [...new Set((await finding.textContent()).match(/\bw\d+\b/g))];
  assert.ok(writers.length > 0, await finding.textContent());
  for (const writer of writers) assert.ok(seen.shown.includes(`worker:${writer}`), `${writer} among ${seen.shown.join(', ')}`);
  assert.ok(seen.scrolled < seen.wide / 2, `scrolled to ${seen.scrolled} of ${seen.wide}`);
  await shot(page, 'history-wide-finding');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a history opened from a file leaves no step or playback in the address; a step past the end is named', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=4');
  await open(page, files[1_000]);
  await page.keyboard.press('PageDown');
  await page.selectOption('#speed', { label: '640×' });
  await page.click('#play');
  await page.waitForFunction(() => location.hash === '#scenario=paused-worker&variant=fenced', null, { timeout: 5_000 });
  await page.click('#play');
  await page.waitForTimeout(400);
  assert.equal(await page.evaluate(() => location.hash), '#scenario=paused-worker&variant=fenced');
  await page.goto(env.server.origin + '/#scenario=paused-worker&step=4000');
  await page.locator('#link-note').waitFor();
  const [end] = await position(page);
  assert.match(
    await text(page, '#link-note p'),
    new RegExp(`^Note: the link's step 4,000 is past the end of this story \\(${end} steps\\), so the page shows its last step\\.$`),
  );
  assert.deepEqual(problems, []);
  await page.close();
});

test('the counter keeps its width, so the scrubber does not move as the run plays; Play keeps its icon on hover', async () => {
  const { page, problems } = await openPage(env, '/');
  await open(page, files[100_000]);
  const width = () => page.locator('#scrubber').evaluate((s) => s.getBoundingClientRect().width);
  const widths = [await width()];
  for (const to of [10_001, 100_000]) {
    await scrub(page, to);
    widths.push(await width());
  }
  assert.ok(Math.max(...widths) - Math.min(...widths) < 1, `scrubber widths ${widths.join(', ')}`);
  // The icon against the button's background, as the pointer rests on it, in either theme.
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    await page.hover('#play');
    const [fg, bg] = await page.locator('#play').evaluate((b) => {
      const style = getComputedStyle(b);
      return [style.color, style.backgroundColor];
    });
    assert.ok(contrast(fg, bg) >= 3, `${colorScheme}: icon ${fg} on ${bg}`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('in a narrow embed the scrubber has a row of its own, and the long-run note sits outside the sideways-scrolling diagram', async () => {
  const widths = {};
  for (const width of [360, 760]) {
    const page = await env.context.newPage();
    await page.setViewportSize({ width, height: 700 });
    await page.goto(`${env.server.origin}/#history=long/${basename(files[100_000])}&embed=controls,caption,diagram`);
    await page.locator('.scrub-marks .scrub-mark').first().waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('#story-title')?.textContent.includes('history-100000'), null, { timeout: 60_000 });
    widths[width] = await page.locator('#scrubber').evaluate((s) => s.getBoundingClientRect().width);
    // The marks' description counts what is drawn.
    const marks = await page.locator('.scrub-marks .scrub-mark').count();
    const said = await text(page, '#scrub-findings');
    assert.match(said, new RegExp(` by ${marks} marks \\(findings close together share one\\)\\.$`), said);
    const note = page.locator('.long-run');
    assert.equal(await note.count(), 1);
    assert.equal(await page.locator('[data-testid="diagram"] .long-run').count(), 0);
    const box = await note.evaluate((n) => n.getBoundingClientRect());
    assert.ok(box.left >= 0 && box.right <= width, `the note spans ${box.left} to ${box.right} in ${width} px`);
    await shot(page, `history-embed-${width}`);
    await page.close();
  }
  assert.ok(widths[760] >= widths[360], `scrubber ${widths[760]} px at 760, ${widths[360]} px at 360`);
});

/** The contrast ratio of two `rgb(...)` colours, as WCAG defines it. */
function contrast(a, b) {
  const luminance = (css) => {
    const [r, g, b] = css.match(/[\d.]+/g).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test('long-history.mjs is a command line too: --help says how, and it writes the history asked for', async () => {
  const script = fileURLToPath(new URL('long-history.mjs', import.meta.url));
  const run = promisify(execFile);
  const { stdout } = await run(process.execPath, [script, '--help']);
  assert.match(stdout, /^Usage: node browser-tests\/long-history\.mjs --events N \[--workers W\] --out FILE/);
  const out = join(dir, 'cli.jsonl');
  const wrote = await run(process.execPath, [script, '--events', '300', '--workers', '3', '--out', out]);
  assert.match(wrote.stdout, /^Wrote 300 events of 3 workers to /);
  const lines = (await readFile(out, 'utf8')).trimEnd().split('\n');
  assert.equal(lines.length, 301, 'a header and 300 events');
  assert.equal(JSON.parse(lines[0]).setup.workers.length, 3);
  await assert.rejects(run(process.execPath, [script, '--events', 'many', '--out', out]), /--events must be a whole number/);
});
