// The Overview, Jobs and Servers pages, and the job operation buttons the job page shares.
import { api, reg, enc, canOperate } from './api.js';
import { h, clear, badge, fmtTime, fmtDuration, debounce, toast, confirmDialog } from './dom.js';
import { executionsChart } from './charts.js';

// A page: its element, refresh() (refetch and redraw), and onEvent from the live stream,
// which refreshes, `delay` ms after the last event, when `wants(type, data)` says the event
// concerns the page. A hidden tab refetches nothing until it is shown again.
export function page(el, refresh, wants = () => true, delay = 250) {
  let stale = false;
  let disposed = false;
  const run = () => {
    if (disposed) return; // a refetch still pending when the page was left
    if (document.hidden) {
      stale = true;
      return;
    }
    refresh().catch((e) => toast(e.message, true));
  };
  const later = debounce(run, delay);
  const onVisible = () => {
    if (!document.hidden && stale) {
      stale = false;
      run();
    }
  };
  document.addEventListener('visibilitychange', onVisible);
  return {
    el, refresh,
    onEvent: (type, data) => (wants(type, data) ? later() : null),
    dispose: () => {
      disposed = true;
      document.removeEventListener('visibilitychange', onVisible);
    },
  };
}

// A change in the workflows' subtree (workflows.js), which the job pages ignore.
export const isWorkflows = (data) => !!data && data.job === '.workflows';

// The operation buttons of a job (none for guests or a read-only console).
export function jobOps(job, after) {
  if (!canOperate()) return null;
  const op = (label, verb, message, opts = {}) => h('button', {
    type: 'button', class: opts.danger ? 'danger' : '', dataset: { op: verb, job: job.name },
    title: message,
    onclick: async () => {
      const answer = await confirmDialog(`${label} ${job.name}?`, message,
        { parameter: verb === 'trigger', ok: label });
      if (!answer) return;
      try {
        const body = verb === 'trigger' && answer.parameter ? { parameter: answer.parameter } : {};
        const r = verb === 'delete' ? await api('DELETE', reg(`jobs/${enc(job.name)}`))
          : await api('POST', reg(`jobs/${enc(job.name)}/${verb}`), body);
        const n = r && (r.triggered ?? r.changed ?? r.stopped);
        toast(`${label}: ${job.name}${n !== undefined && n !== null ? ` (${n})` : ''}`);
        if (after) after(verb);
      } catch (e) {
        toast(`${label} ${job.name}: ${e.message}`, true);
      }
    },
  }, label);
  const disabled = job.status === 'DISABLED';
  return h('span', { class: 'ops' },
    op('Trigger', 'trigger', 'Run the job now on every live instance.'),
    op('Stop', 'stop', 'Cancel what the job runs now on every instance, as a timeout does; the job stays enabled and its next fire runs.'),
    disabled ? op('Enable', 'enable', 'Enable the job on every server.')
      : op('Disable', 'disable', 'Disable the job on every server: it stops being triggered.'),
    op('Shutdown', 'shutdown', 'Stop the job\'s instances (they leave the registry).'),
    op('Remove', 'remove', 'Shut the job down and remove its server nodes (the configuration stays).'),
    op('Delete', 'delete', 'Delete the job: its configuration and every node go; running instances stop.',
      { danger: true }));
}

// A job's newest execution: its outcome and start time (the failure's cause as a tooltip);
// "—" when none is known or tracing is off.
export function lastRun(run) {
  if (!run) return h('span', { class: 'muted' }, '—');
  const outcome = run.success === true ? 'success' : run.success === false ? 'failed' : 'running';
  return h('span', { title: run.failureCause || '' }, badge(outcome), ' ', fmtTime(run.startTime));
}

export function jobLink(name) {
  return h('a', { href: `#/jobs/${enc(name)}`, class: 'job-link' }, name);
}

function tracingNote(e) {
  if (e.status === 404) return h('p', { class: 'muted tracing-off' }, 'Tracing is not configured: start the console with --tracing URL to see executions.');
  return h('p', { class: 'errors' }, `Executions cannot be read now: ${e.message}`);
}

export function overviewPage() {
  const cards = h('div', { class: 'cards' });
  const chart = h('div', { class: 'card', id: 'overview-chart' });
  const failures = h('div', { class: 'card', id: 'overview-failures' });
  const el = h('section', { id: 'overview' }, h('h1', {}, 'Overview'), cards, chart, failures);
  const card = (label, value, cls) => h('div', { class: `card ${cls || ''}` },
    h('div', { class: 'muted' }, label), h('div', { class: 'stat' }, value));
  // The chart's window: [label, its length, the bucket width].
  const windows = [['last 15 minutes', 900000, 15000], ['last hour', 3600000, 60000],
    ['last 6 hours', 21600000, 300000], ['last 24 hours', 86400000, 1200000]];
  const windowSelect = h('select', { id: 'overview-window', onchange: () => {
    localStorage.setItem('ejWindow', windowSelect.value);
    refresh().catch((e) => toast(e.message, true));
  } }, windows.map(([label], i) => h('option', { value: String(i) }, label)));
  windowSelect.value = localStorage.getItem('ejWindow') || '1';
  async function refresh() {
    const [label, length, bucketMs] = windows[Number(windowSelect.value)] || windows[1];
    const since = Date.now() - length;
    const [ov, stats] = await Promise.all([
      api('GET', reg('overview')),
      api('GET', reg(`stats?since=${since}&bucketMs=${bucketMs}`)).catch((e) => ({ error: e })),
    ]);
    const j = ov.jobs || {};
    clear(cards, card('Jobs', j.total ?? 0, 'jobs-total'),
      ['OK', 'FAILING', 'CRASHED', 'DISABLED', 'SHARDING_FLAG'].map((st) =>
        h('a', { class: 'card', href: `#/jobs?status=${st}`, title: `The ${st} jobs` }, badge(st),
          h('div', { class: 'stat', dataset: { status: st } }, j[st] ?? 0))),
      card('Servers', ov.servers ?? 0), card('Instances', ov.instances ?? 0));
    if (stats.error) {
      clear(chart, h('h3', {}, 'Executions'), tracingNote(stats.error));
      clear(failures);
      failures.hidden = true;
      return;
    }
    failures.hidden = false;
    const rate = stats.successRate === null || stats.successRate === undefined ? '—'
      : `${(stats.successRate * 100).toFixed(1)}%`;
    clear(chart, h('div', { class: 'toolbar' }, h('h3', {}, 'Executions'), windowSelect,
      h('span', { class: 'muted', id: 'success-rate' }, `success rate ${rate} (${label})`),
      h('span', { class: 'muted', id: 'timed-out' }, `${stats.timedOut || 0} timed out`)),
      h('div', { class: 'legend' }, h('span', {}, h('i', { class: 'ok' }), 'succeeded'),
        h('span', {}, h('i', { class: 'bad' }), 'failed'), h('span', {}, '— success rate')),
      executionsChart(stats.buckets || [], bucketMs));
    const rf = stats.recentFailures || [];
    clear(failures, h('h3', {}, 'Recent failures'), rf.length === 0 ? h('p', { class: 'muted' }, 'None.')
      : h('table', {}, h('tr', {}, ['Started', 'Job', 'Item', 'IP', 'Cause'].map((t) => h('th', {}, t))),
        rf.map((e) => h('tr', {}, h('td', {}, fmtTime(e.startTime)), h('td', {}, jobLink(e.jobName)),
          h('td', {}, e.shardingItem), h('td', {}, e.ip), h('td', {}, e.failureCause || '')))));
  }
  // The stats query reads an hour of executions: at most every 2 s.
  return page(el, refresh, (type, data) => !isWorkflows(data), 2000);
}

// status: the filter to start with (#/jobs?status=CRASHED, as the overview links).
export function jobsPage(status = '') {
  const search = h('input', { type: 'search', id: 'job-search', placeholder: 'Search name, cron, description',
    value: sessionStorage.getItem('ejSearch') || '' });
  const filter = h('select', { id: 'job-filter' }, ['', 'OK', 'FAILING', 'CRASHED', 'DISABLED', 'SHARDING_FLAG']
    .map((v) => h('option', { value: v, selected: v === status }, v || 'All statuses')));
  const count = h('span', { class: 'muted' });
  const tbody = h('tbody', { id: 'jobs-body' });
  const table = h('table', { id: 'jobs-table' }, h('thead', {}, h('tr', {},
    ['Name', 'Status', 'Cron', 'Items', 'Instances', 'Last run', 'Next fire time', canOperate() ? 'Operations' : null]
      .map((t) => (t ? h('th', { class: /Items|Instances/.test(t) ? 'num' : '',
        title: t === 'Next fire time' ? 'In your browser\'s time zone (a job\'s page shows its own zone)'
          : t === 'Last run' ? 'The newest execution (with tracing); FAILING: the last run of an item failed' : null }, t)
        : null)))), tbody);
  const el = h('section', { id: 'jobs' }, h('h1', {}, 'Jobs'),
    h('div', { class: 'toolbar' }, search, filter, count, canOperate() ? addJobButton() : null), table);
  let jobs = [];
  function draw() {
    const q = search.value.trim().toLowerCase();
    const st = filter.value;
    const shown = jobs.filter((j) => (!st || j.status === st) && (!q || j.name.toLowerCase().includes(q) ||
      (j.cron || '').toLowerCase().includes(q) || (j.description || '').toLowerCase().includes(q)));
    count.textContent = `${shown.length} of ${jobs.length} jobs`;
    const ops = canOperate();
    const rows = shown.map((j) => h('tr', { dataset: { job: j.name } },
      h('td', {}, jobLink(j.name), j.description ? h('div', { class: 'muted description' }, j.description) : null),
      h('td', {}, badge(j.status)), h('td', { class: 'cron' }, j.cron || ''),
      h('td', { class: 'num' }, j.shardingTotalCount ?? ''), h('td', { class: 'num' }, j.instanceCount ?? 0),
      h('td', { class: 'last-run' }, lastRun(j.lastRun)),
      h('td', {}, fmtTime(j.nextFireTime)),
      ops ? h('td', { class: 'ops' }, jobOps(j, () => refresh())) : null));
    clear(tbody, rows.length ? rows : h('tr', {}, h('td', { colSpan: 8, class: 'muted' }, 'No jobs.')));
    performance.mark('jobs-rendered'); // bench/console_page_load.mjs reads the first one
  }
  search.addEventListener('input', () => {
    sessionStorage.setItem('ejSearch', search.value);
    draw();
  });
  filter.addEventListener('change', draw);
  async function refresh() {
    jobs = await api('GET', reg('jobs'));
    draw();
  }
  // Executions too: a run that ends changes a job's last run (and FAILING).
  return page(el, refresh, (type, data) => (type === 'job' && !isWorkflows(data)) || type === 'jobs' || type === 'execution', 1000);
}

// Add a job: its type and its configuration as YAML (the form `elasticjob job config get`
// prints), sent to POST jobs; the new job's page opens.
const NEW_JOB = `jobName: my-job
cron: 0 0/5 * * * ?
shardingTotalCount: 1
description: ''
props:
  script.command.line: /bin/true
`;
function addJobButton() {
  const type = h('select', { id: 'add-type' }, ['SCRIPT', 'HTTP'].map((v) => h('option', { value: v }, v)));
  const yaml = h('textarea', { id: 'add-yaml', class: 'yaml', rows: 8, spellcheck: false, value: NEW_JOB });
  const error = h('p', { class: 'errors', id: 'add-error' });
  const form = h('form', { class: 'card', id: 'add-form', hidden: true },
    h('h3', {}, 'Add a job'), h('div', { class: 'toolbar' }, h('label', {}, 'Type ', type)), yaml, error,
    h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'primary', id: 'add-submit' }, 'Add'),
      h('button', { type: 'button', onclick: () => { form.hidden = true; } }, 'Cancel')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.textContent = '';
    try {
      const job = await api('POST', reg('jobs'), { jobType: type.value, yaml: yaml.value });
      toast(`Added ${job.name}`);
      location.hash = `#/jobs/${enc(job.name)}`;
    } catch (e) {
      error.textContent = e.message;
    }
  });
  const button = h('button', { type: 'button', id: 'add-job', onclick: () => {
    form.hidden = !form.hidden;
    if (!form.hidden) yaml.focus();
  } }, 'Add job');
  return [button, form];
}

// An uptime as "3 d 4 h", "2 h 5 min", "7 min" or "12 s".
function fmtUptime(ms) {
  if (ms == null) return '—';
  const s = Math.floor(ms / 1000), m = Math.floor(s / 60), hr = Math.floor(m / 60), d = Math.floor(hr / 24);
  if (d > 0) return `${d} d ${hr % 24} h`;
  if (hr > 0) return `${hr} h ${m % 60} min`;
  return m > 0 ? `${m} min` : `${s} s`;
}

export function serversPage() {
  const body = h('div', {});
  const el = h('section', { id: 'servers' }, h('h1', {}, 'Servers'), body);
  const op = (ip, verb, label, message) => h('button', {
    type: 'button', class: verb === 'shutdown' ? 'danger' : '', dataset: { op: verb, server: ip },
    onclick: async () => {
      if (!(await confirmDialog(`${label} ${ip}?`, message, { ok: label }))) return;
      try {
        const r = await api('POST', reg(`servers/${enc(ip)}/${verb}`), {});
        toast(`${label} ${ip}: ${r && r.changed !== undefined ? r.changed : 'done'}`);
        refresh();
      } catch (e) {
        toast(`${label} ${ip}: ${e.message}`, true);
      }
    },
  }, label);
  async function refresh() {
    const servers = await api('GET', reg('servers'));
    const ops = canOperate();
    // Each instance (ip@-@pid) with the jobs it runs; the host name from the executions.
    const instances = (sv) => (sv.instanceDetails || []).map((i) => h('div', { class: 'instance', dataset: { instance: i.id } },
      h('span', { class: 'mono' }, i.pid !== undefined ? `pid ${i.pid}` : i.id), ': ',
      (i.jobs || []).length ? i.jobs.map((j, k) => [k ? ', ' : '', jobLink(j)]) : h('span', { class: 'muted' }, 'no jobs')));
    // Version, uptime and heartbeat: one line per instance, from its runtime/{id} node ('—' for
    // a Java instance, which writes none). See docs/console.md, "Servers".
    const perInstance = (sv, cls, cell) => h('td', { class: cls }, (sv.instanceDetails || []).map((i) =>
      h('div', { class: 'instance', dataset: { instance: i.id } }, i.version == null
        ? h('span', { class: 'muted', title: 'no runtime node: a Java ElasticJob instance, or an older elasticjob-cpp' }, '—')
        : cell(i))));
    const heartbeat = (i) => (i.heartbeatWithinMs == null
      ? h('span', { class: 'muted', title: 'the console is not connected to the registry (or the instance has no session)' }, '—')
      : h('span', { title: `The registry still holds this instance's ephemeral node: its last heartbeat reached the registry at most the session timeout (${fmtDuration(i.heartbeatWithinMs)}) ago. Registered (session) since ${fmtTime(i.registeredTime)}.` },
        `≤ ${fmtDuration(i.heartbeatWithinMs)} ago`));
    clear(body, servers.length === 0 ? h('p', { class: 'muted' }, 'No servers.')
      : h('table', { id: 'servers-table' }, h('tr', {}, ['Server', 'Instances and their jobs', 'Version', 'Uptime',
        'Last heartbeat', 'Jobs', 'Disabled jobs', ops ? 'Operations' : null].map((t) => (t ? h('th', {}, t) : null))),
      servers.map((sv) => h('tr', { dataset: { server: sv.ip } }, h('td', {}, sv.ip,
        h('div', { class: 'muted hostname' }, sv.hostname || '')),
        h('td', { class: 'instances' }, instances(sv)),
        perInstance(sv, 'version', (i) => h('span', { class: 'mono', title: i.hostname ? `on ${i.hostname}` : '' }, i.version)),
        perInstance(sv, 'uptime', (i) => h('span', { title: `started ${fmtTime(i.startTime)}` }, fmtUptime(i.uptimeMs))),
        perInstance(sv, 'heartbeat', heartbeat),
        h('td', {}, (sv.jobs || []).map((j, k) => [k ? ', ' : '', jobLink(j)])),
        h('td', { class: 'num' }, sv.disabledJobs ?? 0),
        ops ? h('td', { class: 'ops' },
          op(sv.ip, 'disable', 'Disable', 'Disable every job on this server.'),
          op(sv.ip, 'enable', 'Enable', 'Enable every job on this server.'),
          op(sv.ip, 'shutdown', 'Shutdown', 'Stop every job instance on this server.')) : null))));
  }
  return page(el, refresh, (type, data) => type !== 'execution' && !isWorkflows(data));
}
