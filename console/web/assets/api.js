// The console's REST client (docs/console.md, /api/v1). Relative URLs: the page works from
// `/` of the console or of any static server that proxies api/.
export const state = {
  session: null, // GET session
  registry: 0, // index into GET registries
  onUnauthorized: () => {},
};

export class ApiError extends Error {
  constructor(status, data) {
    super((data && data.error) || `HTTP ${status}`);
    this.status = status;
    this.data = data || {};
  }
}

export async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: 'same-origin' };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  if (method !== 'GET' && state.session && state.session.csrf) {
    opts.headers['X-CSRF-Token'] = state.session.csrf;
  }
  const r = await fetch(`api/v1/${path}`, opts);
  let data = null;
  if (r.status !== 204) {
    try {
      data = await r.json();
    } catch {
      data = null;
    }
  }
  if (!r.ok) {
    const err = new ApiError(r.status, data);
    if (r.status === 401 && path !== 'login') state.onUnauthorized(err);
    throw err;
  }
  return data;
}

// A path under the selected registry: reg('jobs') -> registries/0/jobs.
export function reg(path) {
  return `registries/${state.registry}/${path}`;
}

export const enc = encodeURIComponent;

export function canOperate() {
  const s = state.session;
  return !!s && s.role === 'admin' && !s.readOnly;
}
