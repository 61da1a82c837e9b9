// The live page of lcwrap serve: reads the API with fetch and the
// Authorization header, follows GET /v1/events from the cursor its first
// picture was taken at, and takes a new picture (GET /v1/children) when
// events come: it never projects events itself. Text is only ever set as
// text (textContent), never parsed as HTML.
'use strict';
(function () {
  const KEY = 'lcwrap-serve-token';
  const $ = (id) => document.getElementById(id);
  let token = null;
  let cursor = null;
  let timer = null;
  let lastRefresh = 0;
  let following = false;
  const timelineMax = 300;
  const timelineBack = 100;

  class AuthError extends Error {}

  function conn(state, text) {
    const c = $('conn');
    c.dataset.conn = state;
    c.textContent = text;
  }

  function showLogin(msg) {
    $('login').hidden = false;
    $('main').hidden = true;
    $('loginerr').textContent = msg;
    conn('off', 'not connected');
    $('token').focus();
  }

  async function api(path, headers) {
    const h = Object.assign({ Authorization: 'Bearer ' + token }, headers || {});
    const r = await fetch(path, { headers: h, cache: 'no-store', credentials: 'omit' });
    if (r.status === 401) {
      sessionStorage.removeItem(KEY);
      token = null;
      throw new AuthError('the token was refused');
    }
    return r;
  }

  async function errorText(r) {
    try {
      const b = await r.json();
      return b.error.code + ': ' + b.error.message;
    } catch (e) {
      return 'HTTP ' + r.status;
    }
  }

  // refresh takes a new picture, one that has every line the stream has
  // shown (?cursor: the server waits until its picture has taken it in).
  async function refresh() {
    const numeric = /^[0-9]+$/.test(cursor || '');
    const r = await api('/v1/children?all=1' + (numeric ? '&cursor=' + cursor : ''));
    if (!r.ok) throw new Error(await errorText(r));
    const rep = await r.json();
    const at = r.headers.get('Lcwrap-Cursor') || '';
    // The first stream starts a little before the picture, so that the
    // timeline opens with recent events (the picture has them already).
    if (cursor === null) cursor = /^[0-9]+$/.test(at) ? String(Math.max(0, Number(at) - timelineBack)) : at;
    render(rep);
    if (numeric && /^[0-9]+$/.test(at) && Number(at) < Number(cursor)) scheduleRefresh();
  }

  function scheduleRefresh() {
    if (timer !== null) return;
    const wait = Math.max(0, 250 - (Date.now() - lastRefresh));
    timer = setTimeout(async function () {
      timer = null;
      lastRefresh = Date.now();
      try {
        await refresh();
      } catch (e) {
        if (e instanceof AuthError) showLogin('The token was refused.');
      }
    }, wait);
  }

  function key(c) {
    return (c.host !== undefined ? c.host + '\u0000' : '') + c.childId;
  }

  function order(children) {
    const byKey = new Map();
    const kids = new Map();
    for (const c of children) byKey.set(key(c), c);
    const roots = [];
    for (const c of children) {
      const p = c.lineage && c.lineage.parentChildId;
      const pk = p ? (c.host !== undefined ? c.host + '\u0000' : '') + p : null;
      if (pk && byKey.has(pk) && pk !== key(c)) {
        if (!kids.has(pk)) kids.set(pk, []);
        kids.get(pk).push(c);
      } else {
        roots.push(c);
      }
    }
    const out = [];
    const seen = new Set();
    const walk = (c, depth) => {
      if (seen.has(key(c))) return;
      seen.add(key(c));
      out.push([c, depth]);
      for (const k of kids.get(key(c)) || []) walk(k, depth + 1);
    };
    for (const r of roots) walk(r, 0);
    for (const c of children) walk(c, 0);
    return out;
  }

  function td(tr, cls, text) {
    const d = document.createElement('td');
    if (cls) d.className = cls;
    d.textContent = text;
    tr.appendChild(d);
    return d;
  }

  function ago(ms) {
    if (ms < 0) return 'unknown';
    const s = Math.round(ms / 1000);
    if (s < 60) return s + 's ago';
    if (s < 3600) return Math.round(s / 60) + 'm ago';
    return Math.round(s / 3600) + 'h ago';
  }

  function render(rep) {
    const body = $('tree').tBodies[0];
    const rows = document.createDocumentFragment();
    const waiting = [];
    for (const [c, depth] of order(rep.children || [])) {
      const tr = document.createElement('tr');
      tr.dataset.child = c.childId;
      if (c.host !== undefined) tr.dataset.host = c.host;
      tr.dataset.state = c.display;
      tr.className = 'd' + Math.min(depth, 4);
      td(tr, 'id', (c.host !== undefined ? c.host + ' · ' : '') + c.childId);
      const st = td(tr, '', '');
      const b = document.createElement('span');
      b.className = 'badge';
      b.textContent = c.display;
      st.appendChild(b);
      td(tr, 'act', c.activity ? c.activity.text : '');
      const f = td(tr, '', c.stale ? 'stale: ' + (c.staleReason || '') : ago(c.sinceEvidenceMs));
      if (c.stale) f.className = 'stale';
      td(tr, 'cmd', (c.command || []).join(' '));
      const x = c.exit;
      td(tr, '', x ? (x.code !== undefined ? 'exit ' + x.code : x.signal || x.status || '') : '');
      if (c.display === 'waiting') waiting.push(c.childId);
      rows.appendChild(tr);
    }
    body.replaceChildren(rows);
    const w = $('waiting');
    w.hidden = waiting.length === 0;
    const mark = document.createElement('span');
    mark.className = 'pause';
    w.replaceChildren(mark, document.createTextNode(waiting.length + ' waiting: ' + waiting.join(', ')));
    const shown = (rep.children || []).length;
    $('summary').textContent = shown + ' children shown, ' + rep.ended + ' ended' +
      (rep.evidence ? '' : ' — ' + (rep.message || 'no evidence yet')) + ' · ' + rep.input;
    const bl = $('blocked');
    bl.hidden = !rep.blocked;
    if (rep.blocked) bl.textContent = 'The journal stops at line ' + rep.blocked.line + ' (' + rep.blocked.class + ': ' + rep.blocked.reason + '): later lines are not shown until lcwrap journal repair.';
  }

  function addLine(li) {
    const tl = $('timeline');
    tl.insertBefore(li, tl.firstChild);
    while (tl.children.length > timelineMax) tl.removeChild(tl.lastChild);
  }

  function timeline(ev, host) {
    const li = document.createElement('li');
    const t = document.createElement('span');
    t.className = 't';
    t.textContent = (ev.observedAt || '').replace('T', ' ').replace('Z', '') + ' ';
    li.appendChild(t);
    li.appendChild(document.createTextNode((host ? host + ' · ' : '') + ev.childId + '  ' + ev.kind +
      (ev.state ? ' → ' + ev.state : '') + (ev.activity ? '  ' + ev.activity : '')));
    if (ev.state === 'waiting') li.className = 'waiting';
    addLine(li);
  }

  function note(text) {
    const li = document.createElement('li');
    li.className = 'note';
    li.textContent = text;
    addLine(li);
  }

  function parse(block) {
    const m = { event: 'message', data: '', id: null };
    for (const line of block.split('\n')) {
      if (line === '' || line[0] === ':') continue;
      const c = line.indexOf(':');
      const f = c < 0 ? line : line.slice(0, c);
      let v = c < 0 ? '' : line.slice(c + 1);
      if (v[0] === ' ') v = v.slice(1);
      if (f === 'data') m.data += (m.data ? '\n' : '') + v;
      else if (f === 'event') m.event = v;
      else if (f === 'id') m.id = v;
    }
    return m;
  }

  function onMessage(m) {
    if (m.id !== null) cursor = m.id;
    if (!m.data) return;
    let d;
    try {
      d = JSON.parse(m.data);
    } catch (e) {
      return;
    }
    switch (m.event) {
      case 'message':
        if (d.host !== undefined && d.event) timeline(d.event, d.host);
        else timeline(d, '');
        scheduleRefresh();
        break;
      case 'blocked':
        note('the journal stops at line ' + d.line + ': ' + d.class + ': ' + d.reason);
        scheduleRefresh();
        break;
      case 'notice':
        note('journal ' + d.kind + ' (at line ' + d.sequence + ')');
        scheduleRefresh();
        break;
      case 'damage':
        note('not an event: ' + d.file + ' byte ' + d.offset + ': ' + d.class + ': ' + d.reason);
        break;
      case 'error':
        note('stream error: ' + d.message);
        break;
    }
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  async function follow() {
    if (following) return;
    following = true;
    for (;;) {
      try {
        const r = await api('/v1/events', cursor ? { 'Last-Event-ID': cursor } : {});
        if (!r.ok) throw new Error(await errorText(r));
        conn('live', 'live · cursor ' + (cursor || '0'));
        const rd = r.body.getReader();
        const dec = new TextDecoder();
        let buf = '';
        for (;;) {
          const { value, done } = await rd.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            onMessage(parse(buf.slice(0, i)));
            buf = buf.slice(i + 2);
          }
          conn('live', 'live · cursor ' + (cursor || '0'));
        }
      } catch (e) {
        if (e instanceof AuthError) {
          following = false;
          showLogin('The token was refused.');
          return;
        }
      }
      conn('retry', 'reconnecting after cursor ' + (cursor || '0') + '…');
      await sleep(2000);
    }
  }

  async function start() {
    $('login').hidden = true;
    $('main').hidden = false;
    conn('retry', 'connecting…');
    try {
      await refresh();
    } catch (e) {
      if (e instanceof AuthError) {
        showLogin('The token was refused.');
        return;
      }
      conn('retry', String(e.message || e) + ' — trying again');
      setTimeout(start, 2000);
      return;
    }
    follow();
  }

  function init() {
    const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (m) {
      token = decodeURIComponent(m[1]);
      sessionStorage.setItem(KEY, token);
      history.replaceState(null, '', location.pathname + location.search);
    } else {
      token = sessionStorage.getItem(KEY);
    }
    $('login').addEventListener('submit', function (e) {
      e.preventDefault();
      const v = $('token').value.trim();
      if (!v) return;
      token = v;
      sessionStorage.setItem(KEY, token);
      $('token').value = '';
      start();
    });
    if (token) start();
    else showLogin('');
  }

  init();
})();
