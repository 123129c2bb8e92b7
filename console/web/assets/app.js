// The console's entry point: session and login, the header (registry selector, user, live
// indicator), hash routing (#/, #/jobs[?status=S], #/jobs/NAME, #/servers, #/workflows[/NAME])
// and the live event stream.
import { api, state, ApiError } from './api.js';
import { h, clear, toast } from './dom.js';
import { overviewPage, jobsPage, serversPage } from './pages.js';
import { jobPage } from './job.js';
import { workflowsPage, workflowPage } from './workflows.js';

const main = document.getElementById('main');
let current = null; // the page shown: {refresh(), onEvent(type, data), dispose()}
let events = null;

state.onUnauthorized = () => {
  state.session = null;
  showLogin('Your session has ended: log in again.');
};

async function boot() {
  try {
    state.session = await api('GET', 'session');
  } catch (e) {
    clear(main, h('p', { class: 'errors', id: 'unreachable' },
      `Cannot reach the console API (${e.message}); retrying…`));
    setTimeout(boot, 3000);
    return;
  }
  if (state.session.authEnabled && !state.session.user) showLogin();
  else await startApp();
}

function showLogin(note) {
  closeEvents();
  // Shown already (a logout and a request answered 401 meanwhile both lead here): keep the
  // form and what is typed in it.
  if (main.querySelector('#login-form')) return;
  document.getElementById('header').hidden = true;
  document.getElementById('readonly').hidden = true;
  const user = h('input', { id: 'login-user', name: 'user', autocomplete: 'username', required: true });
  const password = h('input', { id: 'login-password', name: 'password', type: 'password',
    autocomplete: 'current-password', required: true });
  const error = h('p', { id: 'login-error', class: 'errors' }, note && !note.startsWith('Your') ? note : '');
  const form = h('form', { class: 'card login', id: 'login-form' },
    h('h1', {}, 'ElasticJob console'),
    note && note.startsWith('Your') ? h('p', { class: 'muted' }, note) : null,
    h('label', {}, 'User', user), h('label', {}, 'Password', password), error,
    h('button', { class: 'primary', type: 'submit', id: 'login-submit' }, 'Log in'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.textContent = '';
    try {
      state.session = await api('POST', 'login', { user: user.value, password: password.value });
      await startApp();
    } catch (e) {
      error.textContent = e.status === 401 ? 'Wrong user or password.' : e.message;
    }
  });
  if (current && current.dispose) current.dispose();
  current = null;
  clear(main, form);
  user.focus();
}

async function startApp() {
  const s = state.session;
  document.getElementById('header').hidden = false;
  document.getElementById('readonly').hidden = !s.readOnly;
  document.getElementById('user').textContent = s.user ? `${s.user} (${s.role})` : (s.role || '');
  const logout = document.getElementById('logout');
  logout.hidden = !s.authEnabled || !s.user;
  logout.onclick = async () => {
    try {
      await api('POST', 'logout');
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
    }
    state.session = await api('GET', 'session');
    showLogin();
  };
  // The page's data is fetched with the registry last chosen while the list loads; a registry
  // that is gone routes again with the first one.
  const saved = Number(localStorage.getItem('ejRegistry') || 0);
  state.registry = saved;
  openEvents();
  route();
  await loadRegistries(saved);
  if (state.registry !== saved) route();
}

async function loadRegistries(saved) {
  const select = document.getElementById('registry');
  const list = await api('GET', 'registries');
  state.registry = list.some((r) => r.id === saved) ? saved : (list[0] ? list[0].id : 0);
  clear(select, list.map((r) => h('option', { value: String(r.id), selected: r.id === state.registry },
    `${r.url}${r.connected ? '' : ' (disconnected)'}`)));
  select.onchange = () => {
    state.registry = Number(select.value);
    localStorage.setItem('ejRegistry', String(state.registry));
    route();
  };
}

function route() {
  if (!state.session || (state.session.authEnabled && !state.session.user)) return;
  const [hash, query] = location.hash.replace(/^#\/?/, '').split('?');
  const parts = hash.split('/').map((p) => decodeURIComponent(p));
  let page, name = parts[0] || 'overview';
  if (name === 'jobs' && parts[1]) page = jobPage(parts.slice(1).join('/'));
  else if (name === 'jobs') page = jobsPage(new URLSearchParams(query || '').get('status') || '');
  else if (name === 'servers') page = serversPage();
  else if (name === 'workflows' && parts[1]) page = workflowPage(parts.slice(1).join('/'));
  else if (name === 'workflows') page = workflowsPage();
  else {
    name = 'overview';
    page = overviewPage();
  }
  for (const a of document.querySelectorAll('header nav a')) {
    a.classList.toggle('active', a.dataset.route === name);
  }
  if (current && current.dispose) current.dispose();
  current = page;
  clear(main, page.el);
  page.refresh().catch(showError);
}

export function showError(e) {
  if (e instanceof ApiError && e.status === 401) return;
  toast(e.message, true);
}

// Live updates: one EventSource for all registries; an event names what changed and the
// page shown refetches it (debounced in the page). EventSource reconnects on its own after
// a restart; the indicator says so meanwhile, and the page refetches once it is back.
function openEvents() {
  if (events || typeof EventSource === 'undefined') return;
  const live = document.getElementById('live');
  events = new EventSource('api/v1/events');
  let wasDown = false;
  events.onopen = () => {
    live.textContent = 'live';
    live.classList.remove('reconnecting');
    if (wasDown && current) current.refresh().catch(showError);
    wasDown = false;
  };
  events.onerror = () => {
    wasDown = true;
    live.textContent = 'reconnecting…';
    live.classList.add('reconnecting');
    if (events.readyState === EventSource.CLOSED) {
      // Closed for good (e.g. a 401 after a restart that dropped sessions): retry the page.
      events = null;
      setTimeout(() => (state.session ? boot() : null), 3000);
    }
  };
  for (const type of ['job', 'jobs', 'execution']) {
    events.addEventListener(type, (ev) => {
      let data = {};
      try {
        data = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (data.registry !== undefined && data.registry !== state.registry) return;
      if (current && current.onEvent) current.onEvent(type, data);
    });
  }
}

function closeEvents() {
  if (events) events.close();
  events = null;
}

window.addEventListener('hashchange', route);
boot();
