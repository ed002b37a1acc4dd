// Share links, embedding, export and import, on the built page (dist/). Like every
// browser test, each fails on any console error, uncaught exception or failed request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { badgeLabel, launch, openPage, shot, text } from './harness.mjs';

let env;

before(async () => {
  env = await launch(['/', '/docs/deep/fencelab/'], { width: 1280, height: 900 });
});

after(async () => {
  await env?.close();
});

const position = async (page) => (await text(page, '[data-testid="position"] .mono')).replaceAll(',', '').split('/').map(Number);
const hash = (page) => page.evaluate(() => location.hash);

test('a link restores story, policy, step, compare modes and speed, and round-trips', async () => {
  const fragment =
    'scenario=check-then-write&variant=check-then-write&policy=strict&step=4&compare=unfenced,fenced_idempotent&speed=400';
  // The page opens straight into compare mode.
  const { page, problems } = await openPage(env, `/#${fragment}`, '[data-testid="compare"]');
  assert.equal(await page.locator('#case').inputValue(), 'check-then-write');
  assert.equal(await page.locator('#compare-toggle').getAttribute('aria-pressed'), 'true');
  assert.equal((await position(page))[0], 4);
  assert.equal(await page.locator('#speed option:checked').textContent(), '4×');
  assert.equal(await page.locator('#cmp-left-mode').inputValue(), '0');
  assert.equal(await page.locator('#cmp-right-mode').inputValue(), '3');
  // The address is the view: it reads back exactly as given.
  assert.equal(await hash(page), `#${fragment}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('autoplay from a link plays, and moving updates the address without adding history', async () => {
  // 2× (400 ms a step): slow enough that a loaded machine cannot finish the 20 steps before the
  // first check, fast enough to move within the wait below.
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&play=1&speed=200');
  assert.equal(await page.locator('#play').getAttribute('aria-pressed'), 'true');
  await page.waitForFunction(() => /step=[3-9]|step=1\d/.test(location.hash), null, { timeout: 10_000 });
  await page.click('#play');
  const length = await page.evaluate(() => history.length);
  for (let i = 0; i < 5; i++) await page.click('#step-forward');
  const [at] = await position(page);
  // Quick moves write the address at most every quarter second; the last one always lands.
  await page.waitForFunction((at) => new RegExp(`step=${at}(&|$)`).test(location.hash), at);
  assert.doesNotMatch(await hash(page), /play=1/);
  await page.selectOption('#case', 'idempotent-retry');
  await page.waitForFunction(() => /^#scenario=idempotent-retry&variant=/.test(location.hash));
  assert.equal(await page.evaluate(() => history.length), length, 'no history entries added');
  // Reloading the address shows the same view.
  const before = await hash(page);
  await page.reload();
  await page.locator('#play').waitFor();
  assert.equal(await hash(page), before);
  assert.equal(await page.locator('#case').inputValue(), 'idempotent-retry');
  assert.deepEqual(problems, []);
  await page.close();
});

test('bad, truncated and oversized links say what is wrong, show the picker and keep the custom scenario', async () => {
  const { page, problems } = await openPage(env, '/');
  // Make a custom scenario in the editor: it is kept in local storage.
  await page.click('#editor-toggle');
  const area = page.locator('#scenario-json');
  const json = JSON.parse(await area.inputValue());
  json.title = 'My own paused worker';
  await area.fill(JSON.stringify(json, null, 2));
  await page.locator('#story-title .badge', { hasText: 'edited' }).waitFor();
  const customLink = await hash(page);
  assert.match(customLink, /^#custom=/);
  await page.close();

  const cases = [
    ['#scenario=paused-wroker', 'link parameter `scenario`: no story "paused-wroker" (did you mean paused-worker?)'],
    ['#scenario=paused-worker&step=lots', 'link parameter `step`: "lots" is not a step number'],
    [customLink.slice(0, Math.floor(customLink.length / 2)), 'link parameter `custom`:'],
    [`#scenario=paused-worker&variant=${'x'.repeat(70_000)}`, 'link parameter `.`: the link is 70031 bytes long; the limit is 65536'],
  ];
  for (const [link, message] of cases) {
    const opened = await openPage(env, `/${link}`);
    const error = opened.page.locator('#link-error');
    await error.waitFor();
    assert.ok((await error.textContent()).includes(message), `${link.slice(0, 60)}: ${await error.textContent()}`);
    assert.equal(await opened.page.locator('#case').count(), 1, 'the picker is shown');
    // The message points at the picker where it is: above the message.
    assert.match(await error.textContent(), /choose another in the Story menu above/);
    const above = await opened.page.evaluate(
      () => document.querySelector('#case').getBoundingClientRect().bottom <= document.querySelector('#link-error').getBoundingClientRect().top,
    );
    assert.ok(above, 'the Story menu is above the message');
    const restore = opened.page.locator('#restore-custom');
    assert.match(await restore.textContent(), /My own paused worker/);
    if (link.includes('wroker')) {
      await shot(opened.page, 'bad-link', { fullPage: false });
      await restore.click();
      await opened.page.locator('#story-title .badge', { hasText: 'edited' }).waitFor();
      assert.match(await text(opened.page, '#story-title'), /^My own paused worker/);
      assert.equal(await badgeLabel(opened.page), 'edited');
    }
    assert.deepEqual(opened.problems, []);
    await opened.page.close();
  }
  // The custom scenario's own link opens it.
  const opened = await openPage(env, `/${customLink}`);
  assert.match(await text(opened.page, '#story-title'), /^My own paused worker/);
  assert.deepEqual(opened.problems, []);
  await opened.page.close();
  assert.deepEqual(problems, []);
});

test('the embed code works in a 360 px iframe, served from a nested path', async () => {
  const { page, problems } = await openPage(env, '/docs/deep/fencelab/#scenario=paused-worker&variant=fenced&step=18');
  const snippet = await page.locator('#embed-code').inputValue();
  assert.match(snippet, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/docs\/deep\/fencelab\/#scenario=paused-worker&variant=fenced&step=18&embed=controls,caption" title="Fencelab: [^"]+"/);
  await page.click('#copy-embed');
  assert.match(await text(page, '#share-status'), /embed code/);
  // Put the snippet on a page of its own, 360 px wide.
  const host = await env.context.newPage();
  await host.setViewportSize({ width: 360, height: 700 });
  await host.setContent(`<!doctype html><meta name="viewport" content="width=device-width"><body style="margin:0">${snippet.replace('width="100%"', 'width="360"')}</body>`);
  const frame = host.frameLocator('iframe');
  await frame.locator('#play').waitFor({ timeout: 20_000 });
  assert.equal(await frame.locator('#case').count(), 0, 'no picker in an embed');
  assert.equal(await frame.locator('#share-title').count(), 0, 'no share panel in an embed');
  assert.match(await frame.locator('#caption').textContent(), /^#18 · t=18/);
  await frame.locator('#step-forward').click();
  assert.equal((await frame.locator('[data-testid="position"] .mono').textContent()).split('/')[0], '19');
  assert.match(await frame.locator('#caption').textContent(), /stale owner: generation 1 < highest accepted 2/);
  // Nothing spills sideways out of the 360 px frame but the diagram's own scroller.
  const overflow = await frame.locator('body').evaluate((b) => b.scrollWidth - b.clientWidth);
  assert.ok(overflow <= 0, `the embed is ${overflow}px wider than its frame`);
  await shot(host, 'embed-360', { fullPage: true });
  // Diagram-only embeds show no controls or caption.
  const bare = await openPage(env, '/#scenario=paused-worker&embed=diagram', 'svg.swimlanes');
  assert.equal(await bare.page.locator('#play').count(), 0);
  assert.equal(await bare.page.locator('#caption').count(), 0);
  assert.deepEqual(bare.problems, []);
  await bare.page.close();
  await host.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('export the run as JSON, import it: the same step and caption', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=17');
  const caption = await text(page, '#caption');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  assert.equal(download.suggestedFilename(), 'paused-worker-broken.fencelab-run.json');
  const file = await download.path();
  const run = JSON.parse(await readFile(file, 'utf8'));
  assert.equal(run.format, 'fencelab-run/2');
  assert.equal(run.position, 17);
  assert.equal(run.steps.length, 17);
  assert.ok(run.log.length > 0);
  // Import it into a fresh page showing something else, as a reader does.
  const other = await openPage(env, '/#scenario=idempotent-retry');
  const [chooser] = await Promise.all([
    other.page.waitForEvent('filechooser'),
    other.page.click('label[for="import-json"]'),
  ]);
  await chooser.setFiles(file);
  await other.page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('17/'));
  assert.equal(await text(other.page, '#caption'), caption);
  assert.equal(await badgeLabel(other.page), 'edited');
  // A damaged file is refused with the reason, and the view stays.
  const dir = await mkdtemp(join(tmpdir(), 'fencelab-import-'));
  const bad = join(dir, 'bad.json');
  run.steps[3].caption = 'tampered';
  await writeFile(bad, JSON.stringify(run));
  await other.page.setInputFiles('#import-json', bad);
  await other.page.locator('.story .error').waitFor();
  assert.match(await text(other.page, '.story .error'), /could not be imported: replaying the run gives a different result from step 4 on/);
  // The status beside the import control says the same, never that the run was imported.
  assert.match(await text(other.page, '#share-status'), /^Not imported: replaying the run gives a different result from step 4 on/);
  assert.equal(await text(other.page, '#caption'), caption);
  await rm(dir, { recursive: true, force: true });
  assert.deepEqual(other.problems, []);
  await other.page.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('the diagram downloads as a standalone SVG that Chromium renders', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=20');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  assert.equal(download.suggestedFilename(), 'paused-worker-fenced.svg');
  const svg = await readFile(await download.path(), 'utf8');
  assert.match(svg, /^<\?xml[^>]*>\n<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /<style><!\[CDATA\[/);
  // The diagram's description numbers the step as the caption does.
  assert.match(svg, /aria-label="Swimlane diagram, [^"]*step 20 of 20: /);
  assert.match(await text(page, '#caption'), /^#20 · /);
  const dir = await mkdtemp(join(tmpdir(), 'fencelab-svg-'));
  const path = join(dir, 'diagram.svg');
  await writeFile(path, svg);
  const viewer = await env.context.newPage();
  const errors = [];
  viewer.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await viewer.goto(pathToFileURL(path).href);
  // Opened on its own, it is an SVG document (an XML parse error would be an HTML error page).
  assert.equal(await viewer.evaluate(() => document.documentElement.localName), 'svg');
  assert.equal(await viewer.evaluate(() => document.getElementsByTagName('parsererror').length), 0);
  const box = await viewer.evaluate(() => document.querySelector('.lane-line')?.getBoundingClientRect().height ?? 0);
  assert.ok(box > 100, `lanes are drawn (${box}px)`);
  // The lane names (HTML on the page) came along as text above the lanes.
  assert.deepEqual(await viewer.locator('text.export-lane').allTextContents(), ['lease authority', 'A', 'B', 'db']);
  // The page's styles came along: a rejected mark is red, as on the page.
  assert.ok(await viewer.locator('.mark.rejected').count() >= 1);
  await shot(viewer, 'diagram-svg', { fullPage: false });
  assert.deepEqual(errors, []);
  await viewer.close();
  await rm(dir, { recursive: true, force: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('write as a Rust test gives a #[test] replaying the scenario and schedule', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken');
  // The button writes the test into the panel below; its own Copy button copies it.
  assert.equal(await text(page, '#make-rust-test'), 'Write as a Rust test');
  await page.click('#make-rust-test');
  const code = await page.locator('#rust-test').inputValue();
  assert.match(code, /#\[test\]\nfn paused_worker_broken\(\)/);
  assert.match(code, /"name": "paused-worker"/);
  assert.match(code, /"schedule": \[/);
  assert.match(code, /InvariantKind::StaleWriteAccepted, 18/);
  await page.click('#copy-rust-test');
  assert.match(await text(page, '#share-status'), /Rust test/);
  await page.locator('#share-title').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await shot(page, 'share-panel', { fullPage: false });
  assert.deepEqual(problems, []);
  await page.close();
});

test('the transcript lists every step of the run in words', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken');
  const items = page.locator('#transcript ol li');
  assert.equal(await items.count(), 20);
  await page.click('#transcript summary');
  assert.match(await items.nth(18).textContent(), /^#19 · t=19db applies A.s write/);
  assert.equal(await page.locator('#caption').getAttribute('aria-live'), 'polite');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a link pasted into an open page, Back and Forward open their views', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=2');
  await page.evaluate(() => {
    location.hash = '#scenario=paused-worker&variant=broken&step=5';
  });
  await page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('5/'));
  assert.equal(await page.locator('[data-variant="broken"]').getAttribute('aria-checked'), 'true');
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('2/'));
  assert.equal(await page.locator('[data-variant="fenced"]').getAttribute('aria-checked'), 'true');
  await page.goForward();
  await page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('5/'));
  // A pasted link in compare mode opens that view.
  await page.evaluate(() => {
    location.hash = '#scenario=check-then-write&variant=atomic&step=2&compare=unfenced,fenced';
  });
  await page.locator('[data-testid="compare"]').waitFor({ timeout: 20_000 });
  assert.equal(await page.locator('#case').inputValue(), 'check-then-write');
  assert.equal((await position(page))[0], 2);
  assert.equal(await hash(page), '#scenario=check-then-write&variant=atomic&step=2&compare=unfenced,fenced');
  // And a bad one says what is wrong, as on opening.
  await page.evaluate(() => {
    location.hash = '#scenario=paused-worker&step=lots';
  });
  await page.locator('#link-error').waitFor();
  assert.match(await text(page, '#link-error'), /step/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a link pasted while the address waits to follow the view is never overwritten by the view before it', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=fenced&step=2');
  await page.waitForTimeout(300);
  // The first move is written at once; the second comes sooner than a quarter second after it,
  // so its write waits.
  await page.click('#step-forward');
  await page.waitForFunction(() => location.hash.endsWith('&step=3'));
  const waiting = await page.evaluate(async () => {
    document.querySelector('#step-forward').click();
    while (!document.querySelector('[data-testid="position"] .mono').textContent.startsWith('4/')) {
      await new Promise((r) => requestAnimationFrame(r));
    }
    return location.hash;
  });
  assert.match(waiting, /&step=3$/, 'the write of step 4 waits');
  // A heavy view (the generated load, compared) and a slowed processor make Yew yield to the
  // browser between drawing the pasted view and running its effects; a listener after the
  // page's holds the thread until the waiting write is due, so its timer runs in that gap.
  const pasted = '#scenario=generated&variant=fenced&step=2&compare=unfenced,fenced';
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  await page.evaluate((pasted) => {
    const writes = (window.addressWrites = []);
    const replace = history.replaceState.bind(history);
    history.replaceState = (state, title, url) => {
      writes.push(String(url));
      return replace(state, title, url);
    };
    addEventListener('hashchange', () => {
      const until = Date.now() + 300;
      while (Date.now() < until);
    }, { once: true });
    location.hash = pasted;
  }, pasted);
  await page.locator('[data-testid="compare"]').waitFor({ timeout: 30_000 });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
  await page.waitForTimeout(600);
  assert.deepEqual(
    (await page.evaluate(() => window.addressWrites)).filter((url) => url !== pasted),
    [],
    'no write of another view after the pasted link',
  );
  assert.equal(await hash(page), pasted);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a bad link in an embed stays an embed and says, inside it, which parameter is wrong', async () => {
  const fragment = '#scenario=paused-worker&variant=brokn&embed=controls,caption';
  const host = await env.context.newPage();
  const problems = [];
  host.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`));
  host.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  await host.setViewportSize({ width: 720, height: 700 });
  await host.setContent(
    `<!doctype html><body style="margin:0"><iframe src="${env.server.origin}/${fragment}" title="embedded" width="100%" height="560" style="border:0"></iframe></body>`,
  );
  const frame = host.frameLocator('iframe');
  const error = frame.locator('#link-error');
  await error.waitFor({ timeout: 20_000 });
  assert.match(await error.textContent(), /This embedded view could not be opened/);
  assert.match(await error.textContent(), /link parameter `variant`: paused-worker has no variant "brokn"; it has fenced, broken/);
  assert.equal(await error.getAttribute('role'), 'alert');
  // Still an embed: no tabs, no picker, no other story, and small.
  assert.equal(await frame.locator('.tabs').count(), 0);
  assert.equal(await frame.locator('#case').count(), 0);
  assert.equal(await frame.locator('svg.swimlanes').count(), 0);
  assert.equal(await frame.locator('#story-title').count(), 0);
  const height = await frame.locator('body').evaluate((b) => b.scrollHeight);
  assert.ok(height < 560, `the embed is ${height}px tall`);
  // The frame keeps its link, so a reload says the same instead of showing another story.
  const inner = host.frames().find((f) => f !== host.mainFrame());
  assert.equal(await inner.evaluate(() => location.hash), fragment);
  await shot(host, 'embed-bad-link', { fullPage: false });
  assert.deepEqual(problems, []);
  await host.close();
});

test('the playground tab is in the address: links open it, Back and Forward move between the tabs', async () => {
  const { page, problems } = await openPage(env, '/#scenario=paused-worker&variant=broken&step=5');
  const length = await page.evaluate(() => history.length);
  await page.click('#tab-playground');
  await page.locator('.playground').waitFor({ timeout: 20_000 });
  await page.waitForFunction(() => location.hash.endsWith('&tab=playground'));
  assert.equal(await hash(page), '#scenario=paused-worker&variant=broken&step=5&tab=playground');
  assert.equal(await page.evaluate(() => history.length), length + 1, 'the tab change is a history entry');
  assert.equal(await page.locator('#tab-playground').getAttribute('aria-current'), 'page');
  await page.goBack();
  await page.locator('#play').waitFor();
  assert.equal(await page.locator('.playground').count(), 0);
  assert.deepEqual(await position(page), [5, 20]);
  assert.equal(await hash(page), '#scenario=paused-worker&variant=broken&step=5');
  await page.goForward();
  await page.locator('.playground').waitFor();
  assert.equal(await hash(page), '#scenario=paused-worker&variant=broken&step=5&tab=playground');
  // Clicking back to the visualizer is an entry of its own; moving there replaces it.
  await page.click('#tab-visualizer');
  await page.locator('#play').waitFor();
  await page.click('#step-forward');
  await page.waitForFunction(() => location.hash === '#scenario=paused-worker&variant=broken&step=6');
  assert.equal(await page.evaluate(() => history.length), length + 2);
  assert.deepEqual(problems, []);
  await page.close();

  // A link to the playground opens it.
  const opened = await openPage(env, '/#scenario=paused-worker&tab=playground', '.playground');
  assert.equal(await opened.page.locator('#tab-playground').getAttribute('aria-current'), 'page');
  assert.equal(await hash(opened.page), '#scenario=paused-worker&variant=fenced&tab=playground');
  await opened.page.click('#tab-visualizer');
  await opened.page.locator('#play').waitFor();
  await opened.page.goBack();
  await opened.page.locator('.playground').waitFor();
  assert.deepEqual(opened.problems, []);
  await opened.page.close();
});

test('a run exported part-way and imported plays on to the same end as the story', async () => {
  // The story's own end, for comparison.
  const whole = await openPage(env, '/#scenario=check-then-write&variant=check-then-write');
  await whole.page.click('#to-end');
  const end = await text(whole.page, '[data-testid="position"] .mono');
  const lastCaption = await text(whole.page, '#caption');
  const broken = await text(whole.page, '[data-testid="violations-panel"]');
  assert.match(lastCaption, /ends with A's value/);

  const { page, problems } = await openPage(env, '/#scenario=check-then-write&variant=check-then-write&step=17');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const file = await download.path();
  const other = await openPage(env, '/#scenario=paused-worker');
  const [chooser] = await Promise.all([
    other.page.waitForEvent('filechooser'),
    other.page.click('label[for="import-json"]'),
  ]);
  await chooser.setFiles(file);
  await other.page.waitForFunction(() => document.querySelector('[data-testid="position"] .mono')?.textContent.startsWith('17/'));
  await other.page.click('#to-end');
  assert.equal(await text(other.page, '[data-testid="position"] .mono'), end);
  assert.equal(await text(other.page, '#caption'), lastCaption);
  assert.equal(await text(other.page, '[data-testid="violations-panel"]'), broken);
  for (const p of [whole, { page, problems }, other]) {
    assert.deepEqual(p.problems, []);
    await p.page.close();
  }
});

test('the forged-token and wall-clock stories say who was really refused', async () => {
  const forged = await openPage(env, '/#scenario=forged-token&variant=unauthenticated');
  await forged.page.click('#to-end');
  const transcript = await forged.page.locator('details.transcript, #transcript, .transcript').first().textContent();
  assert.match(transcript, /M's write, which no lease backs/);
  assert.match(transcript, /yet A holds the newest lease: the 1000 came from a forged token/);
  assert.doesNotMatch(transcript, /rejects A's write[^.]*: stale owner/);
  const clock = await openPage(env, '/#scenario=wall-clock-tokens&variant=broken');
  const clockText = await clock.page.locator('details.transcript, #transcript, .transcript').first().textContent();
  assert.match(clockText, /yet B holds the newest lease: the 31 was a wall-clock reading/);
  for (const p of [forged, clock]) {
    assert.deepEqual(p.problems, []);
    await p.page.close();
  }
});
