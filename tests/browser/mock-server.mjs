// A stand-in for `elasticjob console` while developing the UI: serves console/web and canned,
// in-memory answers to the REST API of docs/console.md (and its event stream). Not a test of
// the server: the browser tests run against the real `elasticjob console`.
//
//   node tests/browser/mock-server.mjs [--port 8899] [--jobs N] [--no-auth] [--no-tracing]
//
// Users: admin/admin (admin) and guest/guest (guest).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const port = Number(opt('--port', 8899));
const auth = !args.includes('--no-auth');
const tracing = !args.includes('--no-tracing');
const web = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../console/web');
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

const jobs = new Map();
const addJob = (name, extra = {}) => jobs.set(name, {
  name, status: 'OK', jobType: 'SCRIPT', disabledItems: new Set(),
  config: { cron: '0/5 * * * * ?', shardingTotalCount: 2, shardingItemParameters: '', jobParameter: '',
    failover: false, misfire: true, monitorExecution: true, description: '', timeZone: 'Asia/Shanghai',
    disabled: false, overwrite: false, props: { 'script.command.line': '/bin/true' }, ...extra },
});
const n = Number(opt('--jobs', 3));
for (let i = 0; i < n; i++) addJob(`job-${String(i).padStart(4, '0')}`);
addJob('xss', { description: '<img src=x onerror="window.__xss=1">' });
const executions = [];
let execId = 1;
const sessions = new Map();
const clients = new Set();

const nextTimes = (cron, count = 5) => {
  const step = /^0\/(\d+) /.exec(cron);
  const minutes = /^0 0\/(\d+) /.exec(cron);
  const every = step ? Number(step[1]) * 1000 : minutes ? Number(minutes[1]) * 60000 : 60000;
  const now = Date.now();
  return Array.from({ length: count }, (_, k) => (Math.floor(now / every) + k + 1) * every);
};
const cronError = (cron) => (String(cron).trim().split(/\s+/).length < 6 ? `cron '${cron}' is not a Quartz expression: 6 or 7 fields expected` : null);
const view = (j) => ({ name: j.name, status: j.status, cron: j.config.cron, description: j.config.description,
  shardingTotalCount: j.config.shardingTotalCount, instanceCount: j.status === 'OK' ? 1 : 0,
  nextFireTime: j.status === 'DISABLED' ? null : nextTimes(j.config.cron, 1)[0] });
const detail = (j) => ({ ...view(j), jobType: j.jobType, config: j.config,
  yaml: Object.entries(j.config).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n'),
  sharding: Array.from({ length: j.config.shardingTotalCount }, (_, item) => ({ item, instance: '127.0.0.1@-@4242',
    serverIp: '127.0.0.1', status: j.disabledItems.has(item) ? 'DISABLED' : 'PENDING', failover: false })),
  instances: [{ id: '127.0.0.1@-@4242', serverIp: '127.0.0.1', pid: 4242 }],
  servers: [{ ip: '127.0.0.1', status: j.status === 'DISABLED' ? 'DISABLED' : 'ENABLED' }],
  nextFireTimes: j.status === 'DISABLED' ? [] : nextTimes(j.config.cron) });
const emit = (type, data) => { for (const c of clients) c.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`); };

function send(res, code, body, headers = {}) {
  res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

async function handle(req, res) {
  const url = new URL(req.url, 'http://x');
  res.setHeader('Content-Security-Policy', "default-src 'self'");
  // Stands in for `elasticjob job enable NAME` (an operation made outside the browser).
  const outside = /^\/mock\/enable\/(.+)$/.exec(url.pathname);
  if (outside && jobs.has(outside[1])) {
    jobs.get(outside[1]).status = 'OK';
    emit('job', { registry: 0, job: outside[1] });
    return send(res, 204);
  }
  if (!url.pathname.startsWith('/api/v1/')) {
    const file = url.pathname === '/' ? 'index.html' : url.pathname.slice(1);
    const full = path.join(web, file);
    if (!full.startsWith(web) || !fs.existsSync(full) || fs.statSync(full).isDirectory()) return send(res, 404, { error: 'not found' });
    res.writeHead(200, { 'Content-Type': types[path.extname(full)] || 'application/octet-stream' });
    return res.end(fs.readFileSync(full));
  }
  let body = '';
  for await (const c of req) body += c;
  const json = body ? JSON.parse(body) : {};
  const sid = /ejsession=(\w+)/.exec(req.headers.cookie || '')?.[1];
  const who = sessions.get(sid);
  const session = () => (auth ? { user: who ? who.user : null, role: who ? who.role : null, readOnly: false, authEnabled: true, csrf: who ? who.csrf : null }
    : { user: null, role: 'guest', readOnly: true, authEnabled: false, csrf: null });
  const p = url.pathname.slice('/api/v1/'.length);
  if (p === 'session') return send(res, 200, session());
  if (p === 'login') {
    const u = { admin: 'admin', guest: 'guest' }[json.user];
    if (!u || json.password !== u) return send(res, 401, { error: 'bad user or password' });
    const id = Math.random().toString(36).slice(2);
    sessions.set(id, { user: json.user, role: u, csrf: Math.random().toString(36).slice(2) });
    return send(res, 200, { ...sessions.get(id), readOnly: false, authEnabled: true }, { 'Set-Cookie': `ejsession=${id}; HttpOnly; SameSite=Strict; Path=/` });
  }
  if (auth && !who) return send(res, 401, { error: 'not logged in' });
  if (p === 'logout') { sessions.delete(sid); return send(res, 204); }
  if (p === 'events') {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(': hello\n\n');
    clients.add(res);
    req.on('close', () => clients.delete(res));
    return;
  }
  if (p === 'cron') {
    const expr = url.searchParams.get('expr') || '';
    const err = cronError(expr);
    if (err) return send(res, 200, { ok: false, error: err, nextFireTimes: [] });
    const count = Number(url.searchParams.get('count') || 5);
    const after = Number(url.searchParams.get('after') || Date.now());
    const step = nextTimes(expr, 2)[1] - nextTimes(expr, 2)[0];
    const first = Math.floor(after / step) * step + step;
    return send(res, 200, { ok: true, timeZone: url.searchParams.get('zone') || 'UTC',
      nextFireTimes: Array.from({ length: count }, (_, k) => first + k * step) });
  }
  if (p === 'registries') return send(res, 200, [{ id: 0, url: 'zookeeper://127.0.0.1:2181/mock', namespace: 'mock', connected: true }]);
  const m = /^registries\/0\/(.*)$/.exec(p);
  if (!m) return send(res, 404, { error: `no route ${p}` });
  const r = m[1];
  if (req.method !== 'GET' && !r.endsWith('/validate')) {
    if (auth && req.headers['x-csrf-token'] !== who.csrf) return send(res, 403, { error: 'CSRF token missing or wrong' });
    if (auth && who.role !== 'admin') return send(res, 403, { error: 'role guest cannot operate' });
    if (!auth) return send(res, 403, { error: 'the console is read-only' });
  }
  if (r === 'jobs') return send(res, 200, [...jobs.values()].map(view));
  if (r === 'overview') {
    const c = { total: jobs.size, OK: 0, FAILING: 0, CRASHED: 0, DISABLED: 0, SHARDING_FLAG: 0 };
    for (const j of jobs.values()) c[j.status]++;
    return send(res, 200, { jobs: c, servers: 1, instances: 1 });
  }
  if (r === 'servers') {
    return send(res, 200, [{ ip: '127.0.0.1', hostname: tracing ? 'mock-host' : null, instances: ['127.0.0.1@-@4242'],
      instanceDetails: [{ id: '127.0.0.1@-@4242', pid: 4242, jobs: [...jobs.keys()] }], jobs: [...jobs.keys()], disabledJobs: 0 }]);
  }
  if (/^servers\/[^/]+\/(disable|enable|shutdown)$/.test(r)) return send(res, 200, { changed: jobs.size });
  if (/^(executions|stats|status-traces)/.test(r) && !tracing) return send(res, 404, { error: 'tracing is not configured' });
  if (r === 'stats') {
    const bucketMs = Number(url.searchParams.get('bucketMs') || 60000);
    const start = Math.floor(Date.now() / bucketMs) * bucketMs - 59 * bucketMs;
    const buckets = Array.from({ length: 60 }, (_, k) => ({ start: start + k * bucketMs, succeeded: 10 + (k * 7) % 13, failed: k % 9 === 0 ? 2 : 0 }));
    return send(res, 200, { buckets, successRate: 0.97, recentFailures: executions.filter((e) => e.success === false).slice(0, 10) });
  }
  if (r.startsWith('executions')) {
    const em = /^executions\/(\d+)(\/logs)?$/.exec(r);
    if (em) {
      const e = executions.find((x) => x.id === Number(em[1]));
      if (!e) return send(res, 404, { error: `no execution ${em[1]}` });
      if (em[2]) return send(res, 200, { lines: [{ seq: 1, time: e.startTime, level: 'INFO', message: `console-test-output: item ${e.shardingItem} <b>ran</b>` }] });
      return send(res, 200, { ...e, statusTraces: [{ id: 1, jobName: e.jobName, taskId: e.taskId, state: 'TASK_RUNNING', executionType: 'READY', message: '', creationTime: e.startTime }] });
    }
    const job = url.searchParams.get('job');
    return send(res, 200, { items: executions.filter((e) => !job || e.jobName === job).slice(0, 200), limit: 50, offset: 0 });
  }
  const jm = /^jobs\/([^/]+)(?:\/(.*))?$/.exec(r);
  if (!jm) return send(res, 404, { error: `no route ${r}` });
  const j = jobs.get(decodeURIComponent(jm[1]));
  if (!j) return send(res, 404, { error: `no job '${decodeURIComponent(jm[1])}'` });
  const verb = jm[2];
  if (!verb) return send(res, 200, detail(j));
  if (verb === 'validate' || verb === 'config') {
    const c = json.config || {};
    const errors = [];
    const ce = cronError(c.cron);
    if (ce) errors.push({ field: 'cron', message: ce });
    if (!(c.shardingTotalCount >= 1)) errors.push({ field: 'shardingTotalCount', message: `shardingTotalCount ${c.shardingTotalCount} must be at least 1` });
    if (verb === 'validate') return send(res, 200, { ok: errors.length === 0, errors, nextFireTimes: ce ? [] : nextTimes(c.cron), timeZone: c.timeZone });
    if (errors.length) return send(res, 400, { error: errors[0].message, field: errors[0].field });
    j.config = { ...j.config, ...c };
    emit('job', { registry: 0, job: j.name });
    return send(res, 200, detail(j));
  }
  if (verb === 'trigger') {
    const now = Date.now();
    for (let item = 0; item < j.config.shardingTotalCount; item++) {
      const e = { id: execId++, jobName: j.name, taskId: `${j.name}@-@${item}@-@READY`, hostname: 'mock', ip: `10.0.0.${item + 1}`,
        shardingItem: item, executionSource: 'NORMAL_TRIGGER', startTime: now, completeTime: null, success: null, failureCause: '' };
      executions.unshift(e);
      setTimeout(() => { e.completeTime = Date.now(); e.success = item !== 1; e.failureCause = e.success ? '' : 'exit 1'; emit('execution', { registry: 0, job: j.name }); }, 400);
    }
    setTimeout(() => emit('execution', { registry: 0, job: j.name }), 50);
    return send(res, 200, { triggered: 1 });
  }
  if (verb === 'disable' || verb === 'enable') {
    j.status = verb === 'disable' ? 'DISABLED' : 'OK';
    setTimeout(() => emit('job', { registry: 0, job: j.name }), 100);
    return send(res, 200, { changed: 1 });
  }
  if (verb === 'shutdown') return send(res, 200, { changed: 1 });
  if (verb === 'remove') { jobs.delete(j.name); emit('jobs', { registry: 0 }); return send(res, 200, { changed: 1 }); }
  const im = /^items\/(\d+)\/(disable|enable)$/.exec(verb);
  if (im) {
    if (im[2] === 'disable') j.disabledItems.add(Number(im[1])); else j.disabledItems.delete(Number(im[1]));
    emit('job', { registry: 0, job: j.name });
    return send(res, 204);
  }
  return send(res, 404, { error: `no route ${r}` });
}

http.createServer((req, res) => handle(req, res).catch((e) => send(res, 500, { error: e.message })))
  .listen(port, '127.0.0.1', () => console.log(`mock console on http://127.0.0.1:${port}/`));
