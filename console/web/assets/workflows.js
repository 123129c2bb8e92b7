// The Workflows pages (docs/workflows.md): #/workflows lists them; #/workflows/NAME draws the
// DAG with each node's state and result for the latest instance (or the one picked in the
// history below it) and runs the workflow. Both refetch on the live stream's `job` events for
// ".workflows" (the console reports any change of the workflows' subtree so).
import { api, reg, enc, canOperate } from './api.js';
import { h, s, clear, badge, fmtTime, toast, confirmDialog } from './dom.js';
import { page } from './pages.js';

export function workflowLink(name) {
  return h('a', { href: `#/workflows/${enc(name)}`, class: 'workflow-link' }, name);
}

export function workflowsPage() {
  const body = h('div', { id: 'workflows-list' });
  const el = h('section', { id: 'workflows' }, h('h1', {}, 'Workflows'), body);
  async function refresh() {
    const list = await api('GET', reg('workflows'));
    clear(body, list.length === 0
      ? h('p', { class: 'muted' }, 'No workflows. Add one with `elasticjob workflow add FILE.yaml`.')
      : h('table', {}, h('tr', {}, ['Workflow', 'Cron', 'Nodes', 'Coordinator', 'Last instance', 'Status']
        .map((t) => h('th', {}, t))),
      list.map((w) => h('tr', { dataset: { workflow: w.name } }, h('td', {}, workflowLink(w.name)),
        h('td', {}, w.cron || h('span', { class: 'muted' }, 'on demand')), h('td', {}, w.nodes),
        h('td', {}, w.coordinator || h('span', { class: 'muted' }, 'none')),
        h('td', {}, w.lastInstance || '—'), h('td', {}, w.lastStatus ? badge(w.lastStatus) : '—')))));
  }
  return page(el, refresh, workflowEvent);
}

const workflowEvent = (type, data) => type === 'job' && data.job === '.workflows';

// Columns by the longest path from a root, rows in definition order.
function layout(nodes, edges) {
  const level = new Map(nodes.map((n) => [n.id, 0]));
  for (let pass = 0; pass < nodes.length; pass++) {
    let moved = false;
    for (const e of edges) {
      if (level.get(e.to) < level.get(e.from) + 1) {
        level.set(e.to, level.get(e.from) + 1);
        moved = true;
      }
    }
    if (!moved) break;
  }
  const rows = new Map();
  const pos = new Map();
  for (const n of nodes) {
    const col = level.get(n.id);
    const row = rows.get(col) || 0;
    rows.set(col, row + 1);
    pos.set(n.id, { x: 20 + col * 200, y: 20 + row * 84 });
  }
  return { pos, cols: Math.max(0, ...level.values()) + 1, rows: Math.max(1, ...rows.values()) };
}

const W = 150;
const H = 56;

function dag(wf, instance) {
  const state = new Map((instance ? instance.nodes : []).map((n) => [n.id, n]));
  const { pos, cols, rows } = layout(wf.nodes, wf.edges);
  const svg = s('svg', { class: 'dag', id: 'workflow-dag', width: 20 + cols * 200, height: 20 + rows * 84,
    role: 'img', 'aria-label': `The DAG of ${wf.name}` });
  svg.appendChild(s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5,
    markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, s('path', { d: 'M 0 0 L 10 5 L 0 10 z' }))));
  for (const e of wf.edges) {
    const a = pos.get(e.from);
    const b = pos.get(e.to);
    const x1 = a.x + W;
    const y1 = a.y + H / 2;
    const x2 = b.x;
    const y2 = b.y + H / 2;
    const mid = (x1 + x2) / 2;
    svg.appendChild(s('path', { class: 'edge', d: `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`,
      'marker-end': 'url(#arrow)', dataset: { from: e.from, to: e.to } }));
    if (e.when !== null && e.when !== undefined) {
      svg.appendChild(s('text', { class: 'when', x: mid, y: (y1 + y2) / 2 - 4 }, e.when));
    }
  }
  for (const n of wf.nodes) {
    const p = pos.get(n.id);
    const st = state.get(n.id);
    const name = st ? st.state : 'WAITING';
    const sub = n.kind === 'decision' ? n.expression : n.kind === 'workflow' ? `workflow ${n.workflow}` : n.job;
    const result = st && st.result ? st.result : '';
    const tip = [`${n.id} (${n.kind}${sub ? `: ${sub}` : ''})`, `state: ${name}`,
      st && st.attempt ? `attempt: ${st.attempt}` : '', result ? `result: ${result}` : '',
      st && st.error ? `error: ${st.error}` : ''].filter(Boolean).join('\n');
    svg.appendChild(s('g', { class: `wf-node ${name}${n.disabled ? ' disabled' : ''}`,
      transform: `translate(${p.x},${p.y})`, dataset: { node: n.id, state: name, result } },
      s('title', {}, tip),
      s('rect', { width: W, height: H, rx: n.kind === 'decision' ? 18 : 6 }),
      s('text', { class: 'id', x: 8, y: 17 }, n.id.length > 18 ? `${n.id.slice(0, 17)}…` : n.id),
      s('text', { class: 'state', x: W - 8, y: 17, 'text-anchor': 'end' }, name),
      s('text', { class: 'sub', x: 8, y: 33 }, sub.length > 22 ? `${sub.slice(0, 21)}…` : sub),
      s('text', { class: 'result', x: 8, y: 49 }, result ? (result.length > 22 ? `= ${result.slice(0, 20)}…` : `= ${result}`) : '')));
  }
  return svg;
}

export function workflowPage(name) {
  const head = h('div', { class: 'toolbar' }, h('h1', {}, name));
  const summary = h('div', { id: 'workflow-instance', class: 'card' });
  const history = h('div', { id: 'workflow-history', class: 'card' });
  const el = h('section', { id: 'workflow' }, head, summary, history);
  let picked = null; // an instance id chosen in the history; null: the latest
  async function refresh() {
    const wf = await api('GET', reg(`workflows/${enc(name)}`));
    const shown = (picked && wf.history.find((i) => i.id === picked)) || wf.latest;
    const run = canOperate() ? h('button', { type: 'button', class: 'primary', id: 'workflow-run',
      onclick: async () => {
        const answer = await confirmDialog(`Run ${name}?`,
          'Start an instance now. The parameter (a JSON object) is the context it starts from.',
          { parameter: true, ok: 'Run' });
        if (!answer) return;
        try {
          const r = await api('POST', reg(`workflows/${enc(name)}/run`), { parameter: answer.parameter });
          picked = null;
          toast(`Run ${name}: ${r.instance}`);
          refresh().catch((e) => toast(e.message, true));
        } catch (e) {
          toast(`Run ${name}: ${e.message}`, true);
        }
      } }, 'Run') : null;
    clear(head, h('h1', {}, name), h('span', { class: 'muted' }, wf.cron ? `cron ${wf.cron}` : 'on demand'), run);
    clear(summary,
      shown ? h('p', {}, h('strong', { id: 'workflow-instance-id' }, shown.id), ' ', badge(shown.status),
        ' ', h('span', { class: 'muted' }, `${shown.trigger}, ${fmtTime(shown.createdMs)}`),
        shown.message ? h('span', { class: 'errors' }, ` ${shown.message}`) : null)
        : h('p', { class: 'muted' }, 'Never run.'),
      dag(wf, shown),
      shown ? h('details', {}, h('summary', {}, 'Context'), h('pre', {}, JSON.stringify(shown.context, null, 2))) : null);
    clear(history, h('h3', {}, 'History'), wf.history.length === 0 ? h('p', { class: 'muted' }, 'None.')
      : h('table', {}, h('tr', {}, ['Instance', 'Status', 'Trigger', 'Created', 'Ended', 'Message'].map((t) => h('th', {}, t))),
        wf.history.map((i) => h('tr', { dataset: { instance: i.id }, class: shown && i.id === shown.id ? 'selected' : '' },
          h('td', {}, h('a', { href: 'javascript:void 0', onclick: () => { picked = i.id; refresh().catch((e) => toast(e.message, true)); } }, i.id)),
          h('td', {}, badge(i.status)), h('td', {}, i.trigger), h('td', {}, fmtTime(i.createdMs)),
          h('td', {}, i.endedMs ? fmtTime(i.endedMs) : '—'), h('td', {}, i.message || '')))));
  }
  return page(el, refresh, workflowEvent);
}
