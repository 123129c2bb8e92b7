// The web console in a real headless browser (Debian's chromium through puppeteer-core):
// run by console_test.sh against a real `elasticjob console` on a real ZooKeeper. Every wait
// is on a condition with a bound; the first failed check exits 1 after a screenshot.
//
// Environment: CONSOLE_URL, READONLY_URL (a console without accounts or tracing), SHOTS
// (screenshot directory), EJ (the elasticjob binary) and REGISTRY (its --registry URL, for
// operations and reads made outside the browser), TRIGGER_JOB (a job with no scheduled runs),
// OTHER_JOB (an every-10-s job whose description is HTML), the accounts
// ADMIN_USER/ADMIN_PASSWORD and GUEST_USER/GUEST_PASSWORD; CONSOLE_SCRIPT starts the console
// (for the restart check), CONSOLE_PIDFILE holds its PID (a process group leader), CONSOLE_LOG
// is its log. The namespace also has `failing`, an every-10-s job that fails.
import puppeteer from 'puppeteer-core';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';

const env = (k) => {
  if (!process.env[k]) throw new Error(`${k} is not set`);
  return process.env[k];
};
const base = env('CONSOLE_URL');
const shots = env('SHOTS');
const TRIGGER = env('TRIGGER_JOB');
const OTHER = env('OTHER_JOB');
const HANG = env('HANG_JOB');
const WAIT = { timeout: 15000 };
const started = Date.now();
let step = 'launch';

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 860 });
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
page.on('console', (m) => {
  // A refused forced call (the guest check) logs its 403; anything else is a failure.
  if (m.type() === 'error' && !/status of 40[13]/.test(m.text())) pageErrors.push(m.text());
});

// A process that has exited (a zombie until the shell that started it reaps it) is not alive.
function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
async function waitFor(cond, ms, what) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
// Server errors are failures, with the answer's body for the report.
page.on('response', async (r) => {
  if (r.status() >= 500) {
    const body = await r.text().catch(() => '');
    pageErrors.push(`${r.request().method()} ${r.url()} answered ${r.status()} ${body}`);
  }
});
function ok(message) {
  console.log(`ok   ${message}`);
}
async function check(name, fn) {
  step = name;
  await fn();
  ok(name);
}
// A screenshot of the page or of one element, without the passing notifications.
async function shot(name, selector) {
  await page.$$eval('.toast', (ts) => ts.forEach((e) => e.remove()));
  if (selector) await (await page.$(selector)).screenshot({ path: `${shots}/${name}.png` });
  else await page.screenshot({ path: `${shots}/${name}.png` });
}
const text = (sel) => page.$eval(sel, (e) => e.textContent.trim());
const jobRow = (name) => `#jobs-body tr[data-job="${name}"]`;
const go = async (hash, sel) => {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForSelector(sel, WAIT);
};
// Clicks `sel`. A table the event stream redraws may replace the element between the
// look-up and the click ("Node is detached from document"): then the click goes to the
// element that replaced it, as a user's next click would.
async function clickLive(sel) {
  for (let attempt = 1; ; ++attempt) {
    try {
      await page.waitForSelector(sel, WAIT);
      await page.click(sel);
      return;
    } catch (e) {
      if (attempt >= 5 || !/detached|not clickable/i.test(String(e && e.message))) throw e;
    }
  }
}
async function confirmOp(buttonSel, parameter) {
  await clickLive(buttonSel);
  await page.waitForSelector('#confirm[open]', WAIT);
  if (parameter !== undefined) await page.type('#confirm-param', parameter);
  await page.click('#confirm-ok');
  await page.waitForSelector('#confirm:not([open])', WAIT);
}
async function login(user, password) {
  await page.waitForSelector('#login-form', WAIT);
  await page.type('#login-user', user);
  await page.type('#login-password', password);
  await page.click('#login-submit');
  await page.waitForFunction((u) => !document.querySelector('#header').hidden &&
    document.querySelector('#user').textContent.startsWith(u), WAIT, user);
}

try {
  await check('the login page shows before anything else', async () => {
    await page.goto(base, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#login-form', WAIT);
    if (!(await page.$eval('#header', (e) => e.hidden))) throw new Error('header shown before login');
    // Hidden on screen too (a display rule once overrode the attribute): no navigation, no
    // "live" badge, no registry selector before a login.
    const shown = await page.$$eval('header nav a, #live, #registry, #logout',
      (es) => es.filter((e) => e.getClientRects().length > 0).map((e) => e.id || e.textContent));
    if (shown.length) throw new Error(`shown before login: ${shown.join(', ')}`);
  });

  await check('a wrong password is refused with a message', async () => {
    await page.type('#login-user', env('ADMIN_USER'));
    await page.type('#login-password', 'wrong-password');
    await page.click('#login-submit');
    await page.waitForFunction(() => document.querySelector('#login-error').textContent !== '', WAIT);
    await page.$eval('#login-user', (e) => { e.value = ''; });
    await page.$eval('#login-password', (e) => { e.value = ''; });
  });

  await check('admin logs in and sees the overview (jobs by status, executions chart, recent failures)', async () => {
    await login(env('ADMIN_USER'), env('ADMIN_PASSWORD'));
    await page.waitForSelector('#overview', WAIT);
    await page.waitForFunction(() => /admin/.test(document.querySelector('#user').textContent), WAIT);
    await page.waitForFunction(() => Number(document.querySelector('.jobs-total .stat')?.textContent) === 4, WAIT);
    await page.waitForSelector('#overview-chart svg.chart rect.ok', WAIT);
    // `failing` fails every 10 s: a red bar and a row in the recent failures.
    await page.waitForSelector('#overview-chart svg.chart rect.bad', { timeout: 30000 });
    await page.waitForFunction(() => [...document.querySelectorAll('#overview-failures a.job-link')]
      .some((a) => a.textContent === 'failing'), WAIT);
    await page.select('#overview-window', '0');
    await page.waitForFunction(() => /15 minutes/.test(document.querySelector('#success-rate')?.textContent || '') &&
      document.querySelector('#overview-chart svg.chart rect.bad'), WAIT);
    await shot('overview');
  });

  await check('the jobs table lists both jobs with status, cron and next fire time', async () => {
    await go('#/jobs', jobRow(TRIGGER));
    await page.waitForSelector(jobRow(OTHER), WAIT);
    for (const name of [TRIGGER, OTHER]) {
      const status = await text(`${jobRow(name)} .badge`);
      if (status !== 'OK') throw new Error(`${name} status ${status}, expected OK`);
    }
    const cron = await text(`${jobRow(OTHER)} .cron`);
    if (!cron.includes('*')) throw new Error(`cron column shows '${cron}'`);
  });

  await check('a job whose every run fails shows FAILING, with its last run failed and when', async () => {
    await page.waitForFunction((sel) => document.querySelector(`${sel} td:nth-child(2) .badge`)?.textContent === 'FAILING',
      WAIT, jobRow('failing'));
    const last = await text(`${jobRow('failing')} td.last-run`);
    if (!/^failed \S/.test(last)) throw new Error(`its last run shows '${last}'`);
    const color = await page.$eval(`${jobRow('failing')} td:nth-child(2) .badge`, (e) => getComputedStyle(e).backgroundColor);
    if (color !== 'rgb(220, 38, 38)') throw new Error(`FAILING is drawn in ${color}, expected the failure red`);
    await page.waitForFunction((sel) => /^success /.test(document.querySelector(`${sel} td.last-run`)?.textContent || ''),
      WAIT, jobRow(OTHER));
  });

  await check('an HTML job description shows as text, never as markup', async () => {
    const desc = await text(`${jobRow(OTHER)} .description`);
    if (!desc.includes('<img src=x onerror=')) throw new Error(`description shows '${desc}'`);
    if ((await page.$$('#jobs-table img')).length !== 0) throw new Error('an <img> element was created');
    if (await page.evaluate(() => window.__xss)) throw new Error('the onerror handler ran');
  });

  await check('the search box filters the table', async () => {
    await page.type('#job-search', OTHER);
    await page.waitForFunction((t) => !document.querySelector(`#jobs-body tr[data-job="${t}"]`), WAIT, TRIGGER);
    await page.$eval('#job-search', (e) => { e.value = ''; e.dispatchEvent(new Event('input')); });
    await page.waitForSelector(jobRow(TRIGGER), WAIT);
    await shot('jobs');
  });

  await check('disable a job from the table (with confirmation): its status becomes DISABLED', async () => {
    await confirmOp(`${jobRow(OTHER)} button[data-op=disable]`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent === 'DISABLED', WAIT,
      `${jobRow(OTHER)} .badge`);
  });

  await check('the overview counts it as DISABLED; its card lists the DISABLED jobs', async () => {
    await go('#/', '#overview [data-status=DISABLED]');
    await page.waitForFunction(() => document.querySelector('#overview [data-status=DISABLED]').textContent === '1', WAIT);
    await page.click('a.card[href="#/jobs?status=DISABLED"]');
    await page.waitForSelector(jobRow(OTHER), WAIT);
    await page.waitForFunction((t) => !document.querySelector(`#jobs-body tr[data-job="${t}"]`), WAIT, TRIGGER);
    await page.select('#job-filter', '');
    await page.waitForSelector(jobRow(TRIGGER), WAIT);
  });

  await check('a change made outside the browser (elasticjob job enable) arrives live from the event stream', async () => {
    execFileSync(env('EJ'), ['job', 'enable', OTHER, '--registry', env('REGISTRY')], { stdio: 'ignore' });
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent === 'OK', WAIT,
      `${jobRow(OTHER)} .badge`);
  });

  await check('trigger a job with a parameter: its execution appears live, succeeds, and shows trace and logs', async () => {
    await go(`#/jobs/${encodeURIComponent(TRIGGER)}`, '#sharding-table');
    await page.waitForSelector('#job-executions h3', WAIT);
    const before = (await page.$$('#executions-table tr.clickable')).length;
    await confirmOp('#job-ops button[data-op=trigger]', 'from-the-browser');
    await page.waitForFunction((n) => document.querySelectorAll('#executions-table tr.clickable').length > n,
      WAIT, before);
    await page.waitForSelector('#executions-table .badge.success', WAIT);
    await page.waitForSelector('#job-executions svg.timeline rect.bar.ok', WAIT);
    await page.click('#executions-table tr.clickable');
    await page.waitForSelector('#execution-detail #status-trace', WAIT);
    // The script's output, with the parameter given at the trigger in its context.
    await page.waitForFunction(() => /console-test-output.*"jobParameter":"from-the-browser"/
      .test(document.querySelector('#execution-log')?.textContent || ''), WAIT);
    await shot('job');
    await page.screenshot({ path: `${shots}/job-full.png`, fullPage: true });
  });

  await check('Stop on a running job ends its item: the execution turns from running to failed', async () => {
    execFileSync(env('EJ'), ['job', 'trigger', HANG, '--registry', env('REGISTRY')], { stdio: 'ignore' });
    await go(`#/jobs/${encodeURIComponent(HANG)}`, '#sharding-table');
    await page.waitForSelector('#executions-table .badge.running', WAIT);
    await confirmOp('#job-ops button[data-op=stop]');
    await page.waitForSelector('#executions-table .badge.failed', WAIT);
  });

  await check('a scheduled job\'s executions show on the timeline with their trigger lag', async () => {
    await go(`#/jobs/${encodeURIComponent(OTHER)}`, '#sharding-table');
    await page.waitForFunction(() => [...document.querySelectorAll('#executions-table td.lag')]
      .some((td) => /\d/.test(td.textContent)), { timeout: 30000 });
    await page.waitForSelector('#job-executions svg.timeline rect.bar', WAIT);
    if (!/trigger lag median/.test(await text('#exec-summary'))) throw new Error('no trigger lag in the summary');
    await page.click('#job-executions svg.timeline rect.bar');
    await page.waitForSelector('#execution-detail #status-trace', WAIT);
    await shot('executions', '#job-executions');
    await go(`#/jobs/${encodeURIComponent(TRIGGER)}`, '#sharding-table');
    await page.waitForSelector('#cfg-cron', WAIT);
  });

  await check('a PENDING item is drawn in a neutral colour, not a warning\'s', async () => {
    const badge = '#sharding-table tr[data-item="0"] .badge';
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent === 'PENDING', WAIT, badge);
    const rgb = (await page.$eval(badge, (e) => getComputedStyle(e).backgroundColor)).match(/\d+/g).map(Number);
    if (Math.max(...rgb) - Math.min(...rgb) > 40) throw new Error(`PENDING is drawn in rgb(${rgb.join(', ')})`);
  });

  await check('disable and enable one sharding item', async () => {
    const item0 = '#sharding-table tr[data-item="0"]';
    await page.click(`${item0} button[data-op=disable]`);
    await page.waitForFunction((sel) => document.querySelector(`${sel} .badge`)?.textContent === 'DISABLED', WAIT, item0);
    await page.click(`${item0} button[data-op=enable]`);
    await page.waitForFunction((sel) => {
      const b = document.querySelector(`${sel} .badge`);
      return b && b.textContent !== 'DISABLED' && document.querySelector(`${sel} button[data-op=disable]`);
    }, WAIT, item0);
  });

  await check('disable and enable the job on its one server', async () => {
    const sv = '#job-sharding span.server';
    await page.click(`${sv} button[data-op=server-disable]`);
    await page.waitForFunction((sel) => document.querySelector(`${sel} .badge`)?.textContent === 'DISABLED', WAIT, sv);
    await page.click(`${sv} button[data-op=server-enable]`);
    await page.waitForFunction((sel) => document.querySelector(`${sel} .badge`)?.textContent === 'ENABLED', WAIT, sv);
  });

  await check('the editor names an invalid cron at its field, with no preview', async () => {
    await page.click('#cfg-cron', { clickCount: 3 });
    await page.keyboard.press('Backspace');
    await page.type('#cfg-cron', 'not a cron');
    await page.waitForFunction(() => document.querySelector('#err-cron').textContent.trim() !== '', WAIT);
    if (await page.$('#cron-preview-times')) throw new Error('a preview is shown for an invalid cron');
    if (!(await page.$eval('#editor-save', (e) => e.disabled))) throw new Error('Save is enabled with errors');
    await shot('editor-error', '#job-editor');
  });

  await check('a valid cron clears the error and previews the next 5 fire times in the job\'s zone', async () => {
    await page.click('#cfg-cron', { clickCount: 3 });
    await page.keyboard.press('Backspace');
    await page.type('#cfg-cron', '0 0/5 * * * ?');
    await page.waitForFunction(() => document.querySelector('#err-cron').textContent === '' &&
      document.querySelectorAll('#cron-preview-times li').length === 5, WAIT);
    const times = await page.$$eval('#cron-preview-times li', (l) => l.map((e) => e.textContent));
    if (!times.every((t) => /:[0-5][05]:00$/.test(t))) throw new Error(`preview ${times.join(', ')}`);
    await shot('editor', '#job-editor');
    await page.click('#editor-revert');
  });

  await check('the YAML editor validates the whole configuration as you type', async () => {
    await page.select('#editor-mode', 'yaml');
    await page.waitForSelector('#cfg-yaml', { visible: true, ...WAIT });
    const yaml = await page.$eval('#cfg-yaml', (e) => e.value);
    if (!/cron:/.test(yaml)) throw new Error(`the YAML editor holds '${yaml}'`);
    await page.$eval('#cfg-yaml', (e) => {
      e.value = e.value.replace(/^cron:.*$/m, 'cron: 61 * * * * ?');
      e.dispatchEvent(new Event('input'));
    });
    await page.waitForFunction(() => /cron/.test(document.querySelector('#editor-errors').textContent), WAIT);
    await page.click('#editor-revert');
    await page.waitForFunction(() => document.querySelector('#editor-errors').textContent === '', WAIT);
    await page.select('#editor-mode', 'form');
    await page.waitForSelector('#cfg-cron', { visible: true, ...WAIT });
  });

  await check('the editor saves a change through the API: the configuration shows it', async () => {
    await page.click('#cfg-description', { clickCount: 3 });
    await page.keyboard.press('Backspace');
    await page.type('#cfg-description', 'Saved from the browser');
    await page.waitForFunction(() => !document.querySelector('#editor-save').disabled &&
      document.querySelector('#editor-errors').textContent === '', WAIT);
    await page.click('#editor-save');
    await page.waitForFunction(() => document.querySelector('#job-config dd[data-key=description]')?.textContent ===
      'Saved from the browser', WAIT);
    const yaml = execFileSync(env('EJ'), ['job', 'config', 'get', TRIGGER, '--registry', env('REGISTRY')]).toString();
    if (!yaml.includes('Saved from the browser')) throw new Error(`the registry has:\n${yaml}`);
  });

  await check('the editor saves a job that has no time zone, which stays without one', async () => {
    await go(`#/jobs/${encodeURIComponent(OTHER)}`, '#cfg-description');
    if ((await page.$eval('#cfg-timeZone', (e) => e.value)) !== '') throw new Error(`${OTHER} has a time zone`);
    await page.click('#cfg-description', { clickCount: 3 });
    await page.keyboard.press('Backspace');
    await page.type('#cfg-description', 'No zone, saved');
    await page.waitForFunction(() => !document.querySelector('#editor-save').disabled &&
      document.querySelector('#editor-errors').textContent === '' &&
      document.querySelector('#err-timeZone').textContent === '', WAIT);
    await page.click('#editor-save');
    await page.waitForFunction(() => document.querySelector('#job-config dd[data-key=description]')?.textContent ===
      'No zone, saved', WAIT);
    const yaml = execFileSync(env('EJ'), ['job', 'config', 'get', OTHER, '--registry', env('REGISTRY')]).toString();
    if (!yaml.includes('No zone, saved') || /timeZone/.test(yaml)) throw new Error(`the registry has:\n${yaml}`);
  });

  await check('the servers page lists the host (name and IP), each instance with its jobs', async () => {
    await go('#/servers', '#servers-table tr[data-server]');
    await page.waitForFunction((j) => [...document.querySelectorAll('#servers-table td.instances .instance a')]
      .some((a) => a.textContent === j), WAIT, TRIGGER);
    await page.waitForFunction(() => /^pid \d+:/.test(document.querySelector('#servers-table .instance')?.textContent || '') &&
      document.querySelector('#servers-table .hostname')?.textContent.trim() !== '', WAIT);
    // Version, uptime and heartbeat of the instance, from its runtime/{id} node.
    const cells = await page.evaluate(() => Object.fromEntries(['version', 'uptime', 'heartbeat'].map((c) =>
      [c, document.querySelector(`#servers-table td.${c} .instance`)?.textContent.trim() || ''])));
    if (!/^\d+\.\d+\.\d+/.test(cells.version) || !/^\d+ (s|min|h|d)\b/.test(cells.uptime) ||
      !/^≤ .+ ago$/.test(cells.heartbeat)) throw new Error(`the servers page shows ${JSON.stringify(cells)}`);
    const heads = await page.$$eval('#servers-table th', (ths) => ths.map((t) => t.textContent));
    for (const head of ['Version', 'Uptime', 'Last heartbeat']) {
      if (!heads.includes(head)) throw new Error(`no '${head}' column: ${heads.join(', ')}`);
    }
    await shot('servers');
  });

  await check('disable a server (every job on it), then enable it again', async () => {
    const row = '#servers-table tr[data-server]';
    await confirmOp(`${row} button[data-op=disable]`);
    await page.waitForFunction((sel) => document.querySelector(`${sel} td.num`)?.textContent === '4', WAIT, row);
    await confirmOp(`${row} button[data-op=enable]`);
    await page.waitForFunction((sel) => document.querySelector(`${sel} td.num`)?.textContent === '0', WAIT, row);
  });

  await check('add a job from the jobs page (its page opens), then delete it (with confirmation)', async () => {
    await go('#/jobs', jobRow(TRIGGER));
    await page.click('#add-job');
    await page.waitForSelector('#add-yaml', { visible: true, ...WAIT });
    await page.$eval('#add-yaml', (e) => {
      e.value = 'jobName: added\ncron: 0 0/5 * * * ?\nshardingTotalCount: 1\nprops:\n  script.command.line: /bin/true\n';
    });
    await page.click('#add-submit');
    await page.waitForSelector('#job[data-job="added"] #sharding-table', WAIT);
    await confirmOp('#job-ops button[data-op=delete]');
    await page.waitForSelector(jobRow(TRIGGER), WAIT);
    await page.waitForFunction(() => !document.querySelector('#jobs-body tr[data-job="added"]'), WAIT);
  });

  await check('the workflows page draws a diamond with each node\'s state and result; Run starts one', async () => {
    // A diamond over this namespace's jobs: `failing` (C) may fail; A and D are both
    // `manual`, which a path orders.
    const file = `${shots}/diamond.yaml`;
    fs.writeFileSync(file, [
      'name: diamond', 'nodes:', `  - {id: A, job: ${TRIGGER}}`, `  - {id: B, job: ${OTHER}}`,
      '  - {id: C, job: failing, allowFailure: true}', `  - {id: D, job: ${TRIGGER}}`, 'edges:',
      '  - {from: A, to: B}', '  - {from: A, to: C}', '  - {from: B, to: D}', '  - {from: C, to: D}', ''].join('\n'));
    const cli = (...args) => execFileSync(env('EJ'), ['workflow', ...args, '--registry', env('REGISTRY')]).toString();
    cli('add', file);
    fs.unlinkSync(file);
    cli('run', 'diamond', '--wait', '60'); // exits 0 only when the instance succeeded
    await go('#/workflows', '#workflows-list tr[data-workflow="diamond"]');
    await page.click('#workflows-list a.workflow-link');
    await page.waitForSelector('#workflow-dag g.wf-node[data-node="D"][data-state="SUCCEEDED"]', WAIT);
    const nodes = await page.$$eval('#workflow-dag g.wf-node', (gs) => gs.map((g) => `${g.dataset.node}=${g.dataset.state}`).join(' '));
    if (nodes !== 'A=SUCCEEDED B=SUCCEEDED C=FAILED D=SUCCEEDED') throw new Error(`nodes: ${nodes}`);
    const edges = await page.$$eval('#workflow-dag path.edge', (ps) => ps.length);
    if (edges !== 4) throw new Error(`${edges} edges drawn`);
    const result = await page.$eval('#workflow-dag g.wf-node[data-node="A"] text.result', (e) => e.textContent);
    if (result !== '') throw new Error(`A's result: '${result}' (manual prints no RESULT: line)`);
    await shot('workflow', '#workflow-instance');
    await confirmOp('#workflow-run', '{"from":"the browser"}');
    // The new instance is shown and its end arrives live (the event stream; no reload).
    await page.waitForFunction(() => {
      const rows = document.querySelectorAll('#workflow-history tr[data-instance]');
      const shown = document.querySelector('#workflow-instance-id');
      const d = document.querySelector('#workflow-dag g.wf-node[data-node="D"]');
      return rows.length === 2 && shown && shown.textContent === rows[0].dataset.instance &&
        d && d.dataset.state === 'SUCCEEDED';
    }, { timeout: 30000 });
  });

  await check('log out, log in as guest: no operation buttons anywhere', async () => {
    await page.click('#logout');
    await login(env('GUEST_USER'), env('GUEST_PASSWORD'));
    await go('#/jobs', jobRow(TRIGGER));
    if ((await page.$$('button[data-op]')).length !== 0) throw new Error('the jobs table has operation buttons');
    await go(`#/jobs/${encodeURIComponent(TRIGGER)}`, '#sharding-table');
    await page.waitForSelector('#editor-save', WAIT);
    if ((await page.$$('button[data-op]')).length !== 0) throw new Error('the job page has operation buttons');
    if (!(await page.$eval('#editor-save', (e) => e.disabled))) throw new Error('a guest can press Save');
  });

  await check('a guest\'s forced operation call is refused (403) and changes nothing', async () => {
    const r = await page.evaluate(async (job) => {
      const s = await (await fetch('api/v1/session')).json();
      const res = await fetch(`api/v1/registries/0/jobs/${encodeURIComponent(job)}/disable`, {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf || '' }, body: '{}' });
      const after = await (await fetch(`api/v1/registries/0/jobs/${encodeURIComponent(job)}`)).json();
      return { status: res.status, body: await res.text(), role: s.role, jobStatus: after.status };
    }, TRIGGER);
    if (r.role !== 'guest') throw new Error(`session role ${r.role}`);
    if (r.status !== 403) throw new Error(`forced disable answered ${r.status} ${r.body}`);
    if (r.jobStatus === 'DISABLED') throw new Error('the job was disabled anyway');
  });

  await check('a console without accounts is read-only (banner, no login, no operations, tracing note); its registry selector switches namespaces', async () => {
    const context = await browser.createBrowserContext();
    const ro = await context.newPage();
    ro.on('pageerror', (e) => pageErrors.push(`read-only page: ${e.message}`));
    await ro.goto(env('READONLY_URL'), { waitUntil: 'domcontentloaded' });
    await ro.waitForSelector('#readonly:not([hidden])', WAIT);
    await ro.waitForSelector('#overview .tracing-off', WAIT);
    if (await ro.$('#login-form')) throw new Error('a login form on a console without accounts');
    await ro.evaluate(() => { location.hash = '#/jobs'; });
    await ro.waitForSelector(jobRow(TRIGGER), WAIT);
    if ((await ro.$$('button[data-op]')).length !== 0) throw new Error('operation buttons on a read-only console');
    // The registry selector: the second namespace has no jobs; back to the first.
    const options = await ro.$$eval('#registry option', (os) => os.map((o) => o.textContent));
    if (options.length !== 2 || !options[1].includes('/empty')) throw new Error(`registries ${options.join(', ')}`);
    await ro.select('#registry', '1');
    await ro.waitForFunction(() => /0 of 0 jobs/.test(document.querySelector('#jobs')?.textContent || ''), WAIT);
    await ro.select('#registry', '0');
    await ro.waitForSelector(jobRow(TRIGGER), WAIT);
    await ro.evaluate((j) => { location.hash = `#/jobs/${encodeURIComponent(j)}`; }, TRIGGER);
    await ro.waitForSelector('#job-executions .tracing-off', WAIT);
    if (!(await ro.$eval('#editor-save', (e) => e.disabled))) throw new Error('Save enabled on a read-only console');
    await context.close();
  });

  await check('after a console restart the page shows "reconnecting", then comes back on its own', async () => {
    const pid = Number(fs.readFileSync(env('CONSOLE_PIDFILE'), 'utf8'));
    process.kill(-pid, 'SIGTERM');
    await page.waitForSelector('#live.reconnecting', WAIT);
    await waitFor(() => !alive(pid), 10000, 'the console to stop');
    const log = fs.openSync(env('CONSOLE_LOG'), 'a');
    const child = spawn('bash', [env('CONSOLE_SCRIPT')], { detached: true, stdio: ['ignore', log, log] });
    fs.writeFileSync(env('CONSOLE_PIDFILE'), String(child.pid));
    child.unref();
    // Sessions live in the console's memory: after the restart the page asks for a login.
    await page.waitForSelector('#login-form', { timeout: 30000 });
    pageErrors.length = 0; // the failed requests while it was down are expected
    await login(env('GUEST_USER'), env('GUEST_PASSWORD'));
    await page.waitForSelector('#live:not(.reconnecting)', WAIT);
  });

  if (pageErrors.length) {
    step = 'page errors';
    throw new Error(`the page reported errors: ${pageErrors.join(' | ')}`);
  }
  console.log(`browser checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${shots}`);
  await browser.close();
} catch (e) {
  console.log(`FAIL ${step}: ${e.message}`);
  if (pageErrors.length) console.log(`page errors: ${pageErrors.join(' | ')}`);
  await page.screenshot({ path: `${shots}/failure.png`, fullPage: true }).catch(() => {});
  console.log(`screenshot of the failure: ${shots}/failure.png`);
  await browser.close();
  process.exit(1);
}
