// What the visualizer's benchmark and profiler time inside the page, so no DevTools round trip is
// counted: steps, seeks and opening a history, each to a finished style and layout pass, beside
// an empty action measured the same way (the baseline). Each action starts just after a frame and
// ends when Yew has rendered (a microtask) and a layout pass has run, so a figure is the action's
// own work and never includes the painting of a frame (`profile.mjs` shows painting).

/**
 * Runs in the page (`page.evaluate(timeSteps, options)`): `steps` presses of the Right arrow,
 * then `seeks` moves of the scrubber to random positions in `0..=end`, after `baseline` empty
 * actions. Each figure is in milliseconds; `script` is the part before the style and layout pass
 * (the reducer, the core, Yew's diff and the DOM patch), `layout` that pass. `unrendered` counts
 * actions whose render had not finished when they were timed (none, unless Yew changes how it
 * schedules rendering).
 */
export async function timeSteps({ steps, seeks, end, baseline = 50 }) {
  const channel = new MessageChannel();
  const settle = () =>
    new Promise((resolve) => {
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(0);
    });
  // Yew renders, and runs its effects, in a microtask queued by the event's handler: a few
  // microtasks later it has finished, before the browser can draw a frame.
  const rendered = async () => {
    for (let i = 0; i < 3; i++) await new Promise((resolve) => queueMicrotask(resolve));
  };
  const layout = () => document.body.getBoundingClientRect().height;
  // After the next frame has been drawn: a task queued from its animation frame callback runs
  // once the frame is done.
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => settle().then(resolve)));
  const where = () => document.querySelector('[data-testid="position"] .mono')?.textContent;
  // Actions that changed the position but whose render was not done when timed: should be none.
  let unrendered = 0;
  const time = async (act, into) => {
    await frame();
    const before = where();
    // Marks for profile.mjs, which counts only what happens between them.
    performance.mark('action');
    const t0 = performance.now();
    act();
    await rendered();
    const t1 = performance.now();
    layout();
    const t2 = performance.now();
    performance.mark('action-done');
    const after = where();
    await settle();
    if (after === before && where() !== before) unrendered++;
    into.total.push(t2 - t0);
    into.script.push(t1 - t0);
    into.layout.push(t2 - t1);
  };
  const figures = () => ({ total: [], script: [], layout: [] });
  const empty = figures();
  for (let i = 0; i < baseline; i++) await time(() => {}, empty);
  const step = figures();
  const key = () => document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
  for (let i = 0; i < steps; i++) await time(key, step);
  const scrubber = document.querySelector('#scrubber');
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const seek = figures();
  for (let i = 0; i < seeks; i++) {
    const to = Math.floor(random() * (end + 1));
    await time(() => {
      scrubber.value = String(to);
      scrubber.dispatchEvent(new Event('input', { bubbles: true }));
    }, seek);
  }
  return { baseline: empty, step, seek, unrendered };
}

/**
 * Opens `file` (a path on this machine) with the page's "Open a history" chooser and times, in
 * the page, from the chooser's change event to the history drawn (its title on screen and a
 * finished layout pass). Reading the file (`FileReader`, as the page reads it) is timed on its
 * own afterwards, so `afterRead` is what opening costs once the text is there.
 */
export async function openHistoryTimed(page, file, name) {
  await page.evaluate((name) => {
    window.__opened = new Promise((resolve) => {
      // On the window, in the capture phase: before the page's own listener, which clears the
      // chooser once it has taken the file.
      window.addEventListener(
        'change',
        (event) => {
          const t0 = performance.now();
          window.__file = event.target.files[0];
          const poll = () => {
            if (document.querySelector('#story-title')?.textContent.includes(name)) {
              document.body.getBoundingClientRect();
              resolve(performance.now() - t0);
            } else setTimeout(poll, 0);
          };
          poll();
        },
        { once: true, capture: true },
      );
    });
  }, name);
  await page.setInputFiles('#open-history', file);
  const total = await page.evaluate(() => window.__opened);
  const read = await page.evaluate(async () => {
    const file = window.__file;
    const t0 = performance.now();
    await new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = resolve;
      reader.onerror = reject;
      reader.readAsText(file);
    });
    return performance.now() - t0;
  });
  return { total, read, afterRead: total - read };
}

/** Median, 95th percentile and worst of `xs`. */
export function stats(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95), worst: sorted[sorted.length - 1] };
}

/** How many elements the page holds: the DOM size the windowing keeps bounded. */
export const domNodes = (page) => page.evaluate(() => document.getElementsByTagName('*').length);
