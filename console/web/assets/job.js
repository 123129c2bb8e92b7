// One job's page: status and operations, configuration, sharding table (with per-item
// disable/enable), next fire times, the configuration editor (validated as you type, with a
// cron preview) and the executions (timeline per instance, table, status trace and logs).
import { api, reg, enc, canOperate, ApiError } from './api.js';
import { h, clear, badge, fmtTime, fmtDuration, debounce, toast } from './dom.js';
import { page, jobOps, lastRun } from './pages.js';
import { timeline } from './charts.js';

// The editor's fields: [config key, label, kind].
const FIELDS = [
  ['cron', 'Cron', 'text'],
  ['timeZone', 'Time zone', 'text'],
  ['shardingTotalCount', 'Sharding total count', 'number'],
  ['shardingItemParameters', 'Sharding item parameters', 'text'],
  ['jobParameter', 'Job parameter', 'text'],
  ['description', 'Description', 'textarea'],
  ['failover', 'Failover', 'checkbox'],
  ['misfire', 'Misfire', 'checkbox'],
  ['monitorExecution', 'Monitor execution', 'checkbox'],
  ['maxTimeDiffSeconds', 'Max time diff (s)', 'number'],
  ['reconcileIntervalMinutes', 'Reconcile interval (min)', 'number'],
  ['fixedRate', 'Fixed rate (e.g. 30s; instead of a cron)', 'text'],
  ['fixedDelay', 'Fixed delay (e.g. 5m: the next run this long after the previous one ended on every instance; instead of a cron)', 'text'],
  ['timeoutMs', 'Timeout per execution (ms, 0 none)', 'number'],
  ['maxRetries', 'Max retries', 'number'],
  ['retryIntervalMs', 'Retry interval (ms)', 'number'],
];
// Optional fields (null when unset: every job without a time zone, a one-off job without a
// cron): an empty input leaves them unset, never "" (a time zone "" is not a zone).
// A fixed-delay job has no fire times to list: its next run follows the previous one's end.
const delayOf = (c) => (c && c.fixedDelay && !c.cron && !c.fixedRate ? c.fixedDelay : '');
const OPTIONAL = new Set(['cron', 'timeZone', 'fixedRate', 'fixedDelay']);

export function jobPage(name) {
  const statusEl = h('span', { id: 'job-status' });
  const title = h('h1', {}, name, ' ', statusEl);
  const ops = h('div', { class: 'toolbar', id: 'job-ops' });
  const configBox = h('div', { class: 'card', id: 'job-config' });
  const shardingBox = h('div', { class: 'card', id: 'job-sharding' });
  const timesBox = h('div', { class: 'card', id: 'job-next' });
  const editorBox = h('div', { class: 'card', id: 'job-editor' });
  const execBox = h('div', { class: 'card', id: 'job-executions' });
  const detailBox = h('div', { class: 'card', id: 'execution-detail', hidden: true });
  const el = h('section', { id: 'job', dataset: { job: name } }, h('p', {}, h('a', { href: '#/jobs' }, '← Jobs')),
    title, ops, h('div', { class: 'grid2' }, configBox, h('div', {}, shardingBox, timesBox)),
    editorBox, execBox, detailBox);
  let job = null;
  let editor = null;

  async function refresh() {
    let j;
    try {
      j = await api('GET', reg(`jobs/${enc(name)}`));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        clear(el, h('p', {}, h('a', { href: '#/jobs' }, '← Jobs')), h('h1', {}, name),
          h('p', { class: 'errors' }, e.message));
        return;
      }
      throw e;
    }
    job = j;
    const zone = j.timeZone || (j.config && j.config.timeZone) || '';
    clear(statusEl, badge(j.status), ' ',
      h('span', { class: 'muted' }, j.jobType || ''),
      j.lastRun ? h('span', { class: 'muted last-run', id: 'job-last-run' }, ' last run ', lastRun(j.lastRun)) : null);
    clear(ops, jobOps(j, (verb) => (verb === 'delete' ? (location.hash = '#/jobs') : refresh())));
    drawConfig(configBox, j);
    drawSharding(shardingBox, j, refresh);
    clear(timesBox, h('h3', {}, 'Next fire times', zone ? h('span', { class: 'muted' }, ` (${zone})`) : null),
      delayOf(j.config) ? h('p', { id: 'job-next-delay' }, `After the previous run ends + ${delayOf(j.config)}`)
        : (j.nextFireTimes || []).length === 0 ? h('p', { class: 'muted' }, 'None (disabled, or no more fire times).')
        : h('ul', { class: 'times', id: 'job-next-times' }, j.nextFireTimes.map((t) => h('li', {}, fmtTime(t, zone)))));
    if (!j.config) {
      clear(editorBox, h('p', { class: 'errors' }, `The stored configuration cannot be read: ${j.configError || 'unknown error'}`));
      editor = null;
    } else if (!editor) {
      editor = configEditor(name, j, () => refresh());
      clear(editorBox, editor.el);
    } else if (!editor.dirty()) {
      editor.load(j);
    }
    await drawExecutions(execBox, detailBox, name, j.config && j.config.cron, zone);
    // An execution shown while it ran: its outcome, trace and log lines so far.
    if (detailBox.dataset.running === '1') await showExecution(detailBox, { id: detailBox.dataset.id }, true);
  }
  return page(el, refresh, (type, data) => type === 'jobs' || data.job === name, 500);
}

function drawConfig(box, j) {
  const c = j.config || {};
  const rows = j.config ? [] : [h('dt', {}, 'error'), h('dd', { class: 'errors' }, j.configError || 'unreadable')];
  for (const [k, v] of Object.entries(c)) {
    if (k === 'props' && v && typeof v === 'object') continue;
    const shown = v === null || v === undefined || v === '' ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    rows.push(h('dt', {}, k), h('dd', { dataset: { key: k } }, shown));
  }
  for (const [k, v] of Object.entries(c.props || {})) rows.push(h('dt', {}, `props.${k}`), h('dd', {}, String(v)));
  const yaml = h('details', {}, h('summary', {}, 'YAML'), h('pre', { id: 'job-yaml' }, j.yaml || ''));
  clear(box, h('h3', {}, 'Configuration'), h('dl', { class: 'kv' }, rows), yaml);
}

function drawSharding(box, j, refresh) {
  const ops = canOperate();
  const itemOp = (item, verb) => h('button', {
    type: 'button', dataset: { op: verb, item },
    onclick: async () => {
      try {
        await api('POST', reg(`jobs/${enc(j.name)}/items/${item}/${verb}`), {});
        toast(`Item ${item} ${verb}d`);
        refresh();
      } catch (e) {
        toast(`Item ${item}: ${e.message}`, true);
      }
    },
  }, verb === 'disable' ? 'Disable' : 'Enable');
  const rows = (j.sharding || []).map((s) => h('tr', { dataset: { item: s.item } },
    h('td', { class: 'num' }, s.item), h('td', {}, s.instance || '—'), h('td', {}, s.serverIp || '—'),
    h('td', {}, badge(s.status)), h('td', {}, s.failover ? badge('yes') : 'no'),
    ops ? h('td', { class: 'ops' }, itemOp(s.item, s.status === 'DISABLED' ? 'enable' : 'disable')) : null));
  // The job on one server: disable or enable it there only.
  const serverOp = (ip, verb) => h('button', {
    type: 'button', dataset: { op: `server-${verb}`, server: ip },
    onclick: async () => {
      try {
        await api('POST', reg(`jobs/${enc(j.name)}/${verb}`), { server: ip });
        toast(`${j.name} ${verb}d on ${ip}`);
        refresh();
      } catch (e) {
        toast(`${j.name} on ${ip}: ${e.message}`, true);
      }
    },
  }, verb === 'disable' ? 'Disable here' : 'Enable here');
  const servers = (j.servers || []).map((sv) => h('span', { class: 'server', dataset: { server: sv.ip } }, sv.ip, ' ',
    badge(sv.status), ' ', ops ? serverOp(sv.ip, sv.status === 'DISABLED' ? 'enable' : 'disable') : null, ' '));
  clear(box, h('h3', {}, 'Sharding'), h('table', { id: 'sharding-table' },
    h('tr', {}, ['Item', 'Instance', 'Server', 'Status', 'Failover', ops ? '' : null]
      .map((t) => (t === null ? null : h('th', {}, t)))), rows),
  h('p', { class: 'muted' }, `${(j.instances || []).length} instance(s). Servers: `, servers.length ? servers : 'none'));
}

// The configuration editor: a form over the main fields; every change is validated through
// POST validate (debounced), errors shown at their field, the cron preview under it; Save
// PUTs the whole configuration.
function configEditor(name, job, saved) {
  const inputs = {};
  const errorsOf = {};
  const general = h('div', { class: 'errors', id: 'editor-errors' });
  const preview = h('div', { id: 'cron-preview' });
  const save = h('button', { type: 'submit', class: 'primary', id: 'editor-save', disabled: !canOperate() }, 'Save');
  const revert = h('button', { type: 'button', id: 'editor-revert' }, 'Revert');
  let base = {};
  let dirty = false;
  let seq = 0;
  // Form (the main fields) or YAML (the whole stored configuration, as `job config get` prints).
  let mode = 'form';
  const yamlArea = h('textarea', { id: 'cfg-yaml', class: 'yaml', rows: 16, spellcheck: false });
  yamlArea.addEventListener('input', () => {
    dirty = true;
    validateSoon();
  });
  const modeSelect = h('select', { id: 'editor-mode', onchange: () => {
    mode = modeSelect.value;
    fieldsBox.hidden = mode !== 'form';
    yamlBox.hidden = mode !== 'yaml';
    validate();
  } }, h('option', { value: 'form' }, 'Form'), h('option', { value: 'yaml' }, 'YAML'));
  const fields = FIELDS.map(([key, label, kind]) => {
    const id = `cfg-${key}`;
    const input = kind === 'textarea' ? h('textarea', { id, name: key, rows: 2 })
      : h('input', { id, name: key, type: kind === 'number' ? 'number' : kind === 'checkbox' ? 'checkbox' : 'text',
        autocomplete: 'off', spellcheck: false });
    inputs[key] = { input, kind };
    errorsOf[key] = h('div', { class: 'field-error', id: `err-${key}` });
    input.addEventListener(kind === 'checkbox' ? 'change' : 'input', () => {
      dirty = true;
      validateSoon();
    });
    return h('div', { class: 'field', dataset: { field: key } }, h('label', { htmlFor: id }, label), input, errorsOf[key]);
  });
  const fieldsBox = h('div', { id: 'editor-fields' }, fields);
  const yamlBox = h('div', { id: 'editor-yaml', hidden: true }, yamlArea);
  function load(j) {
    base = { ...(j.config || {}) };
    for (const [key, { input, kind }] of Object.entries(inputs)) {
      const v = base[key];
      if (kind === 'checkbox') input.checked = !!v;
      else input.value = v === undefined || v === null ? '' : String(v);
    }
    yamlArea.value = j.yaml || '';
    dirty = false;
    showResult({ ok: true, errors: [], nextFireTimes: j.nextFireTimes, timeZone: base.timeZone });
  }
  function collect() {
    const c = { ...base };
    for (const [key, { input, kind }] of Object.entries(inputs)) {
      if (kind === 'checkbox') c[key] = input.checked;
      else if (kind === 'number') c[key] = input.value === '' ? undefined : Number(input.value);
      else if (OPTIONAL.has(key) && input.value.trim() === '') c[key] = base[key] === '' ? '' : null;
      else c[key] = input.value;
      if (c[key] === undefined || (c[key] === '' && base[key] === undefined)) delete c[key];
    }
    return c;
  }
  const body = () => (mode === 'yaml' ? { yaml: yamlArea.value } : { config: collect() });
  function showResult(r) {
    for (const k of Object.keys(errorsOf)) {
      errorsOf[k].textContent = '';
      errorsOf[k].parentElement.classList.remove('invalid');
    }
    const other = [];
    for (const e of r.errors || []) {
      const field = String(e.field || '').replace(/^config\./, '');
      if (errorsOf[field] && mode === 'form') {
        const msg = String(e.message || '');
        errorsOf[field].textContent = msg.startsWith(`${field}: `) ? msg.slice(field.length + 2) : msg;
        errorsOf[field].parentElement.classList.add('invalid');
      } else {
        other.push(h('li', {}, e.field ? `${e.field}: ${e.message}` : e.message));
      }
    }
    clear(general, other.length ? h('ul', {}, other) : null);
    const zone = (mode === 'form' && inputs.timeZone.input.value.trim()) || r.timeZone || '';
    const times = r.nextFireTimes || [];
    clear(preview, h('strong', {}, 'Next fire times'), zone ? h('span', { class: 'muted' }, ` (${zone})`) : null,
      delayOf(mode === 'form' ? collect() : base) ? h('p', { id: 'cron-preview-delay' }, `After the previous run ends + ${delayOf(mode === 'form' ? collect() : base)}`)
        : times.length ? h('ol', { class: 'times', id: 'cron-preview-times' }, times.map((t) => h('li', {}, fmtTime(t, zone))))
        : h('p', { class: 'muted' }, r.ok === false ? 'No preview: fix the errors.' : 'None.'));
    save.disabled = !canOperate() || r.ok === false;
  }
  async function validate() {
    const my = ++seq;
    try {
      const r = await api('POST', reg(`jobs/${enc(name)}/validate`), body());
      if (my === seq) showResult(r);
    } catch (e) {
      if (my === seq) showResult({ ok: false, errors: [{ field: e.data.field, message: e.message }] });
    }
  }
  const validateSoon = debounce(validate, 300);
  const form = h('form', { class: 'editor', id: 'editor-form', novalidate: true },
    h('div', { class: 'toolbar' }, h('h3', {}, 'Edit configuration'), modeSelect), fieldsBox, yamlBox, general, preview,
    h('div', { class: 'toolbar' }, save, revert,
      canOperate() ? null : h('span', { class: 'muted' }, 'Validation only: you cannot save.')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!canOperate()) return;
    try {
      await api('PUT', reg(`jobs/${enc(name)}/config`), body());
      dirty = false;
      toast(`Saved ${name}`);
      saved();
    } catch (e) {
      showResult({ ok: false, errors: [{ field: e.data.field, message: e.message }] });
      toast(`Save ${name}: ${e.message}`, true);
    }
  });
  revert.addEventListener('click', () => load(job));
  load(job);
  return { el: form, load: (j) => { job = j; load(j); }, dirty: () => dirty };
}

// Trigger lag of each scheduled execution: its start minus the job's last fire time at or
// before it (GET /api/v1/cron?after=, from 5 minutes before the oldest start). Executions with
// no fire time in that window (manual triggers, failover, a cron that changed) have none.
async function triggerLags(items, cron, zone) {
  const lags = new Map();
  const scheduled = items.filter((e) => e.executionSource === 'NORMAL_TRIGGER' && e.startTime);
  if (!cron || scheduled.length === 0) return lags;
  const from = Math.min(...scheduled.map((e) => e.startTime)) - 300000;
  let fires = [];
  try {
    const r = await api('GET', `cron?expr=${enc(cron)}${zone ? `&zone=${enc(zone)}` : ''}&after=${from}&count=1000`);
    fires = (r.nextFireTimes || []).filter((t) => t > from);
  } catch {
    return lags;
  }
  if (fires.length === 0 || fires[0] > from + 300000 + 1000) return lags;
  for (const e of scheduled) {
    let lo = 0, hi = fires.length - 1, at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (fires[mid] <= e.startTime) {
        at = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    // Past the end of the list the fire time before the start is not known.
    if (at >= 0 && at < fires.length - 1) lags.set(e.id, e.startTime - fires[at]);
  }
  return lags;
}

// Execution times are shown in the browser's zone (fire times in the job's).
async function drawExecutions(box, detail, name, cron, zone) {
  let r;
  try {
    r = await api('GET', reg(`executions?job=${enc(name)}&limit=200`));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      clear(box, h('h3', {}, 'Executions'), h('p', { class: 'muted tracing-off' },
        'Tracing is not configured: start the console with --tracing URL to see executions.'));
      return;
    }
    throw e;
  }
  const items = r.items || [];
  if (items.length === 0) {
    clear(box, h('h3', {}, 'Executions'), h('p', { class: 'muted', id: 'no-executions' }, 'No executions yet.'));
    return;
  }
  const done = items.filter((e) => e.completeTime);
  const ok = done.filter((e) => e.success).length;
  const durations = done.map((e) => e.completeTime - e.startTime).sort((a, b) => a - b);
  const pct = (p) => durations[Math.min(durations.length - 1, Math.floor(p * durations.length))];
  const pick = (e) => showExecution(detail, e);
  const lags = await triggerLags(items, cron, zone);
  const lagList = [...lags.values()].sort((a, b) => a - b);
  const lagAt = (p) => lagList[Math.min(lagList.length - 1, Math.floor(p * lagList.length))];
  clear(box, h('h3', {}, 'Executions ', h('span', { class: 'muted' }, `(latest ${items.length})`)),
    h('p', { id: 'exec-summary' }, `Success rate ${done.length ? ((ok / done.length) * 100).toFixed(1) : '—'}% of ${done.length} finished; `,
      `duration median ${fmtDuration(pct(0.5))}, p95 ${fmtDuration(pct(0.95))}, max ${fmtDuration(durations[durations.length - 1])}`,
      lagList.length ? `; trigger lag median ${fmtDuration(lagAt(0.5))}, p95 ${fmtDuration(lagAt(0.95))}.` : '.'),
    h('div', { class: 'legend' }, h('span', {}, h('i', { class: 'ok' }), 'succeeded'),
      h('span', {}, h('i', { class: 'bad' }), 'failed'), h('span', {}, h('i', { class: 'run' }), 'running')),
    timeline(items, pick),
    h('table', { id: 'executions-table' }, h('tr', {}, ['Started', 'Item', 'IP', 'Source', 'Trigger lag', 'Duration', 'Outcome']
      .map((t) => h('th', {}, t))),
    items.slice(0, 50).map((e) => h('tr', { class: 'clickable', dataset: { id: e.id }, onclick: () => pick(e) },
      h('td', {}, fmtTime(e.startTime)), h('td', { class: 'num' }, e.shardingItem), h('td', {}, e.ip || ''),
      h('td', {}, e.executionSource || ''), h('td', { class: 'lag' }, lags.has(e.id) ? fmtDuration(lags.get(e.id)) : '—'),
      h('td', {}, e.completeTime ? fmtDuration(e.completeTime - e.startTime) : '—'),
      h('td', {}, e.success === true ? badge('success') : e.success === false ? badge('failed') : badge('running'))))));
}

// `again`: the same execution redrawn (it was running when shown), without moving the page.
async function showExecution(box, e, again = false) {
  box.hidden = false;
  box.dataset.id = e.id;
  if (!again) clear(box, h('h3', {}, `Execution ${e.id}`), h('p', { class: 'muted' }, 'Loading…'));
  try {
    const [one, logs] = await Promise.all([
      api('GET', reg(`executions/${enc(e.id)}`)),
      api('GET', reg(`executions/${enc(e.id)}/logs`)).catch(() => ({ lines: [] })),
    ]);
    const traces = one.statusTraces || [];
    clear(box, h('h3', {}, `Execution ${one.id}`),
      h('dl', { class: 'kv' }, [['Job', one.jobName], ['Task', one.taskId], ['Item', one.shardingItem],
        ['Host', `${one.ip || ''} ${one.hostname || ''}`], ['Source', one.executionSource],
        ['Started', fmtTime(one.startTime)], ['Completed', fmtTime(one.completeTime)],
        ['Duration', one.completeTime ? fmtDuration(one.completeTime - one.startTime) : '—'],
        ['Outcome', one.success === true ? 'success' : one.success === false ? 'failed' : 'running'],
        ['Failure cause', one.failureCause || '']].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '')])),
      h('h3', {}, 'Status trace'), traces.length === 0 ? h('p', { class: 'muted' }, 'No status traces.')
        : h('table', { id: 'status-trace' }, h('tr', {}, ['Time', 'State', 'Type', 'Message'].map((t) => h('th', {}, t))),
          traces.map((t) => h('tr', {}, h('td', {}, fmtTime(t.creationTime)), h('td', {}, t.state),
            h('td', {}, t.executionType || ''), h('td', {}, t.message || '')))),
      h('h3', {}, 'Log lines'), (logs.lines || []).length === 0 ? h('p', { class: 'muted' }, 'No log lines.')
        : h('pre', { class: 'log', id: 'execution-log' }, logs.lines.map((l) =>
          `${fmtTime(l.time)} ${l.level || ''} ${l.message}\n`).join('')));
    box.dataset.running = one.completeTime ? '' : '1';
    if (!again) box.scrollIntoView({ block: 'nearest' });
  } catch (err) {
    clear(box, h('h3', {}, `Execution ${e.id}`), h('p', { class: 'errors' }, err.message));
  }
}
