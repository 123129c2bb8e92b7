// Page load of the web console's Jobs page in Debian's chromium (headless, puppeteer-core):
// for RUNS fresh browser contexts (no cache, no cookies), loads URL#/jobs and reports, from
// navigation start, first paint, first contentful paint (the header and "Loading…") and the
// jobs table drawn (the page's `jobs-rendered` mark: every row in the DOM, painted next frame).
// Run by bench/console_page_load.sh (which starts ZooKeeper, adds the jobs and the console).
//   node console_page_load.mjs URL EXPECTED_ROWS [RUNS]
import puppeteer from 'puppeteer-core';

const [url, expected, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 5);
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const results = [];
for (let i = 0; i < runs; i++) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await page.setCacheEnabled(false);
  await page.goto(`${url}#/jobs`, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction((n) => document.querySelectorAll('#jobs-body tr[data-job]').length >= n,
    { timeout: 30000 }, Number(expected));
  // Two frames after the table: its paint has happened.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const m = await page.evaluate(() => {
    const paint = Object.fromEntries(performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
    const rendered = performance.getEntriesByName('jobs-rendered')[0];
    const list = performance.getEntriesByType('resource').find((e) => /\/registries\/\d+\/jobs$/.test(e.name));
    return { fp: paint['first-paint'], fcp: paint['first-contentful-paint'],
      table: rendered ? rendered.startTime : null,
      apiStart: list ? list.startTime : null, apiEnd: list ? list.responseEnd : null,
      rows: document.querySelectorAll('#jobs-body tr[data-job]').length };
  });
  results.push(m);
  console.log(`run ${i + 1}: first paint ${m.fp.toFixed(0)} ms, first contentful paint ${m.fcp.toFixed(0)} ms, ` +
    `table of ${m.rows} jobs drawn ${m.table.toFixed(0)} ms (GET jobs ${m.apiStart.toFixed(0)}-${m.apiEnd.toFixed(0)} ms)`);
  await context.close();
}
await browser.close();
const median = (k) => {
  const v = results.map((r) => r[k]).sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
};
const max = (k) => Math.max(...results.map((r) => r[k]));
console.log(`median of ${runs}: first paint ${median('fp').toFixed(0)} ms, first contentful paint ` +
  `${median('fcp').toFixed(0)} ms (max ${max('fcp').toFixed(0)}), table drawn ${median('table').toFixed(0)} ms ` +
  `(max ${max('table').toFixed(0)})`);
