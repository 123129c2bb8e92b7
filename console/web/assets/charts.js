// The console's two charts, drawn as SVG: executions over time (stacked bars, succeeded and
// failed, with the success rate as a line) and an execution timeline (one row per
// ip/hostname, one bar per execution, coloured by outcome).
import { s, fmtTime, fmtDuration } from './dom.js';

// buckets: [{start, succeeded, failed}], bucketMs: their width.
export function executionsChart(buckets, bucketMs) {
  const W = 1000, H = 220, L = 40, R = 44, T = 10, B = 28;
  const w = W - L - R, hh = H - T - B;
  const max = Math.max(1, ...buckets.map((b) => b.succeeded + b.failed));
  const n = Math.max(1, buckets.length);
  const bw = w / n;
  const y = (v) => T + hh - (v / max) * hh;
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': 'Executions over time' });
  svg.append(s('line', { class: 'axis', x1: L, y1: T + hh, x2: L + w, y2: T + hh }),
    s('text', { x: L - 6, y: T + 10, 'text-anchor': 'end' }, max),
    s('text', { x: L - 6, y: T + hh, 'text-anchor': 'end' }, 0),
    s('text', { x: L + w + 6, y: T + 10 }, '100%'),
    s('text', { x: L + w + 6, y: T + hh }, '0%'));
  const points = [];
  buckets.forEach((b, i) => {
    const x = L + i * bw + bw * 0.1, bwid = Math.max(1, bw * 0.8);
    const title = `${fmtTime(b.start)}: ${b.succeeded} succeeded, ${b.failed} failed`;
    if (b.succeeded > 0) {
      svg.append(s('rect', { class: 'ok', x, y: y(b.succeeded), width: bwid,
        height: T + hh - y(b.succeeded) }, s('title', {}, title)));
    }
    if (b.failed > 0) {
      svg.append(s('rect', { class: 'bad', x, y: y(b.succeeded + b.failed), width: bwid,
        height: y(b.succeeded) - y(b.succeeded + b.failed) }, s('title', {}, title)));
    }
    const total = b.succeeded + b.failed;
    if (total > 0) points.push(`${L + i * bw + bw / 2},${T + hh - (b.succeeded / total) * hh}`);
  });
  if (points.length > 1) svg.append(s('polyline', { class: 'line', points: points.join(' ') }));
  const ticks = Math.min(6, n);
  for (let k = 0; k < ticks; k++) {
    const i = Math.round((k * (n - 1)) / Math.max(1, ticks - 1));
    if (!buckets[i]) continue;
    svg.append(s('text', { x: L + i * bw + bw / 2, y: H - 8, 'text-anchor': 'middle' },
      fmtTime(buckets[i].start).slice(11, 16)));
  }
  void bucketMs;
  return svg;
}

// items: executions ({id, ip, hostname, startTime, completeTime, success}); onPick(item).
export function timeline(items, onPick, now = Date.now()) {
  const rows = [...new Set(items.map(rowKey))].sort();
  const W = 900, L = 170, R = 10, T = 6, RH = 22, B = 24;
  const H = T + rows.length * RH + B;
  const t0 = Math.min(...items.map((e) => e.startTime));
  const t1 = Math.max(t0 + 1000, ...items.map((e) => e.completeTime || now));
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const svg = s('svg', { class: 'chart timeline', viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': 'Executions per instance' });
  rows.forEach((r, i) => {
    svg.append(s('rect', { class: 'row', x: L, y: T + i * RH + 1, width: W - L - R, height: RH - 2 }),
      s('text', { x: L - 6, y: T + i * RH + 15, 'text-anchor': 'end' }, r));
  });
  for (const e of items) {
    const i = rows.indexOf(rowKey(e));
    const end = e.completeTime || now;
    const cls = e.success === true ? 'ok' : e.success === false ? 'bad' : 'run';
    const title = `item ${e.shardingItem} on ${rowKey(e)}: ${fmtTime(e.startTime)}, ` +
      `${e.completeTime ? fmtDuration(e.completeTime - e.startTime) : 'running'}` +
      `${e.success === false ? ', failed' : ''}`;
    const bar = s('rect', { class: `bar ${cls}`, x: x(e.startTime), y: T + i * RH + 4,
      width: Math.max(3, x(end) - x(e.startTime)), height: RH - 8,
      dataset: { id: e.id } }, s('title', {}, title));
    bar.addEventListener('click', () => onPick(e));
    svg.append(bar);
  }
  svg.append(s('line', { class: 'axis', x1: L, y1: H - B + 2, x2: W - R, y2: H - B + 2 }),
    s('text', { x: L, y: H - 6 }, fmtTime(t0)),
    s('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, fmtTime(t1)));
  return svg;
}

function rowKey(e) {
  return e.hostname && e.hostname !== e.ip ? `${e.ip} (${e.hostname})` : e.ip || '?';
}
