import { launch, openPage, PHONE } from './harness.mjs';
for (const [name, vp, opts] of [['phone', PHONE, { hasTouch: true, isMobile: true }], ['desktop', { width: 1440, height: 900 }, {}]]) {
  const env = await launch(['/'], vp, {}, opts);
  for (const path of ['/', '/#course=the-paused-worker']) {
    const { page } = await openPage(env, path);
    await page.waitForTimeout(600);
    const r = await page.evaluate(() => { const d = document.querySelector('.diagram').getBoundingClientRect(); const vis = Math.max(0, Math.min(d.bottom, innerHeight) - Math.max(d.top, 0)); return { top: Math.round(d.top), share: (vis / innerHeight).toFixed(2) }; });
    console.log(name, path, JSON.stringify(r));
    await page.screenshot({ path: `/tmp/first-${name}-${path.length}.png` });
    await page.close();
  }
  await env.close();
}
