// DOM helpers. Every text from the API goes in as a text node (never as HTML), so a job
// description such as `<img src=x onerror=...>` shows as those characters.

// h('tr', {class: 'x', onclick: fn, dataset: {job: 'a'}}, 'text', child, [more children])
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children, true);
}

function build(el, attrs, children, svg = false) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'class' && !svg) el.className = v;
    else if (k in el && !svg && k !== 'list') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const formats = new Map();
// A time as "YYYY-MM-DD HH:mm:ss" in `zone` (an IANA name; the browser's zone when empty or
// unknown). Formatters are cached: building one is the slow part.
export function fmtTime(ms, zone) {
  if (ms === null || ms === undefined) return '—';
  const key = zone || '';
  let f = formats.get(key);
  if (!f) {
    const opts = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit',
      minute: '2-digit', second: '2-digit', hourCycle: 'h23' };
    try {
      f = new Intl.DateTimeFormat('sv-SE', zone ? { ...opts, timeZone: zone } : opts);
    } catch {
      f = new Intl.DateTimeFormat('sv-SE', opts);
    }
    formats.set(key, f);
  }
  return f.format(new Date(ms));
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60000);
  return `${m} min ${Math.round((ms % 60000) / 1000)} s`;
}

export function badge(text, cls = text) {
  return h('span', { class: `badge ${cls}` }, text);
}

export function debounce(fn, ms) {
  let t = null;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

export function toast(message, error = false) {
  const box = document.getElementById('toasts');
  const t = h('div', { class: error ? 'toast error' : 'toast', role: 'status', title: 'Click to close',
    onclick: () => t.remove() }, message);
  box.appendChild(t);
  setTimeout(() => t.remove(), error ? 8000 : 4000);
}

// confirmDialog('Disable job x?', 'message', {parameter: true}) -> null when cancelled, else
// {parameter} (the optional parameter field's text).
export function confirmDialog(title, message, { parameter = false, ok = 'OK' } = {}) {
  const dlg = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-message').textContent = message;
  document.getElementById('confirm-param-label').hidden = !parameter;
  const input = document.getElementById('confirm-param');
  input.value = '';
  document.getElementById('confirm-ok').textContent = ok;
  dlg.returnValue = '';
  dlg.showModal();
  if (parameter) input.focus();
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      resolve(dlg.returnValue === 'ok' ? { parameter: input.value } : null);
    }, { once: true });
  });
}
