// The app's browser side: the session cookie, the audio player and the stretch-review desk.
// One Streamlit component (st.components.v2), three modes chosen by data.mode; the player shows
// the waveform view of waveform.js when the page gives it data.wave. Every piece of
// user or reference text is put in the page with textContent, never as HTML.

const KEY = "__ablate";
const shared = (window[KEY] = window[KEY] || { audio: new Map(), players: new Set(), desks: new Set() });

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.appendChild(child);
  return node;
}

function typing(event) {
  const t = event.target;
  return t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName));
}

function plainKey(event) {
  return !event.ctrlKey && !event.metaKey && !event.altKey && !event.defaultPrevented;
}

function seconds(value, lang) {
  return decimal(value, lang === "pt" ? "pt-BR" : "en", 2) + " s";
}

// A number as the page's language writes it (the server's i18n.number on this side): "1,25" in pt-BR.
function decimal(value, locale, digits) {
  return value.toLocaleString(locale || "pt-BR", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

// ---------------------------------------------------------------- session and connection notice

function installConnectionNotice(strings) {
  // Streamlit's own dialog asks "Are you connected to the internet?" when a local server stops.
  shared.connection = strings;
  if (shared.connectionObserver) return;
  const fix = () => {
    const s = shared.connection;
    for (const node of document.querySelectorAll('[role="dialog"] *, [data-testid="stNotification"] *')) {
      if (node.childElementCount === 0 && /connected to the internet|Is Streamlit still running|Streamlit server is not responding/.test(node.textContent)) {
        node.textContent = s.connection_lost;
      }
      if (node.tagName === "CODE" && /streamlit run/.test(node.textContent)) node.textContent = s.connection_restart;
      if (node.childElementCount === 0 && node.textContent === "Connection error") node.textContent = s.connection_title;
    }
  };
  shared.connectionObserver = new MutationObserver(fix);
  shared.connectionObserver.observe(document.body, { childList: true, subtree: true, characterData: true });
}

async function session(component) {
  const { data, setTriggerValue } = component;
  installConnectionNotice(data.strings);
  if (data.logout) {
    await fetch(data.path, { method: "DELETE", credentials: "same-origin" }).catch(() => null);
    setTriggerValue("done", true);
  } else if (data.token && shared.sentToken !== data.token) {
    shared.sentToken = data.token;
    shared.session = fetch(data.path, { method: "POST", credentials: "same-origin", body: data.token })
      .then((answer) => answer.ok)
      .catch(() => false);
    setTriggerValue("ready", await shared.session);
  }
}

// ---------------------------------------------------------------- audio player

async function fetchClip(url) {
  // Right after login the session cookie may still be on its way: wait for it, and try once more.
  if (shared.session) await shared.session;
  let answer = await fetch(url, { credentials: "same-origin" });
  if (answer.status === 403) {
    await new Promise((resolve) => setTimeout(resolve, 700));
    if (shared.session) await shared.session;
    answer = await fetch(url, { credentials: "same-origin" });
  }
  if (!answer.ok) throw new Error(await answer.text());
  return { src: URL.createObjectURL(await answer.blob()), clipStart: Number(answer.headers.get("X-Clip-Start") || 0) };
}

async function clipUrl(audio) {
  const url = `${audio.path}?recording=${encodeURIComponent(audio.recording)}&start=${audio.start}&end=${audio.end}&context=${audio.context}`;
  if (!shared.audio.has(url)) shared.audio.set(url, fetchClip(url));
  try {
    return await shared.audio.get(url);
  } catch (error) {
    shared.audio.delete(url);
    throw error;
  }
}

const RATES = [0.5, 0.75, 1, 1.25, 1.5, 2];

class Player {
  // Two clips: the stretch with its context, and the stretch alone (`s`), which stops where its
  // samples end: a stop timed by the page's frames would overshoot by a frame or more.
  constructor(root, data) {
    this.root = root;
    this.sound = new Audio();
    this.sound.preload = "auto";
    this.alone = new Audio();
    this.alone.preload = "auto";
    this.alone.addEventListener("ended", () => this.draw());
    this.mode = "context";
    this.loop = false;
    this.rate = 1;
    this.build(data);
    this.tick = this.tick.bind(this);
    this.onKey = this.onKey.bind(this);
    document.addEventListener("keydown", this.onKey);
    shared.players.add(this);
  }

  build(data) {
    // a list of players (conflicts) answers no keys: its labels name none
    const s = data.main === false
      ? Object.fromEntries(Object.entries(data.strings).map(([k, v]) => [k, v.replace(/\s*\([^)]*\)$/, "")]))
      : data.strings;
    this.strings = s;
    this.lang = data.lang;
    this.root.replaceChildren();
    this.label = el("span", { class: "ab-time", "data-testid": "ab-time" });
    this.bar = el("div", { class: "ab-bar", title: s.bar_title });
    this.region = el("div", { class: "ab-region" });
    this.head = el("div", { class: "ab-head" });
    this.bar.append(this.region, this.head);
    this.bar.addEventListener("click", (event) => {
      const box = this.bar.getBoundingClientRect();
      if (!this.sound.duration) return;
      if (this.mode === "alone") {
        this.alone.pause();
        this.mode = "context";
      }
      this.sound.currentTime = ((event.clientX - box.left) / box.width) * this.sound.duration;
      this.draw();
    });
    this.playButton = el("button", { class: "ab-btn ab-primary", "data-testid": "ab-play", onclick: () => this.toggle("context") }, el("span", { text: s.play_context }));
    this.aloneButton = el("button", { class: "ab-btn", "data-testid": "ab-alone", onclick: () => this.toggle("alone") }, el("span", { text: s.play_alone }));
    this.replayButton = el("button", { class: "ab-btn", onclick: () => this.replay() }, el("span", { text: s.replay }));
    this.loopBox = el("input", { type: "checkbox", "data-testid": "ab-loop", onchange: () => this.setLoop(this.loopBox.checked) });
    this.rateSelect = el("select", { class: "ab-rate", "data-testid": "ab-rate", "aria-label": s.rate, onchange: () => this.setRate(Number(this.rateSelect.value)) });
    for (const rate of RATES) this.rateSelect.append(el("option", { value: String(rate), text: `${rate.toLocaleString(s.locale || "pt-BR")}×`, selected: rate === 1 }));
    this.status = el("span", { class: "ab-status" });
    this.sound.setAttribute("data-testid", "ab-audio");
    this.sound.addEventListener("seeked", () => this.audio && this.draw()); // a seek from the waveform view too
    this.alone.setAttribute("data-testid", "ab-audio-alone");
    this.root.append(
      this.sound,
      this.alone,
      el("div", { class: "ab-player-row" },
        this.playButton, this.aloneButton, this.replayButton,
        el("label", { class: "ab-check" }, this.loopBox, el("span", { text: s.loop })),
        el("label", { class: "ab-check" }, el("span", { text: s.rate }), this.rateSelect),
        this.label, this.status),
      this.bar,
    );
    if (data.wave) {
      this.wave = new Waveform(this); // waveform.js, loaded before this file
      this.root.append(this.wave.root);
    }
  }

  async load(data) {
    this.main = data.main !== false;
    const audio = data.audio;
    const id = `${audio.recording}:${audio.start}:${audio.end}:${audio.context}`;
    if (this.id === id) return;
    this.id = id;
    this.audio = audio;
    this.sound.pause();
    this.alone.pause();
    this.alone.removeAttribute("src");
    this.status.textContent = this.strings.loading;
    try {
      const [clip, alone] = await Promise.all([clipUrl(audio), clipUrl({ ...audio, context: 0 })]);
      if (this.id !== id) return;
      this.clipStart = clip.clipStart;
      this.sound.src = clip.src;
      this.sound.dataset.clipStart = String(clip.clipStart);
      this.aloneStart = alone.clipStart;
      this.alone.src = alone.src;
      this.alone.dataset.clipStart = String(alone.clipStart);
      for (const sound of [this.sound, this.alone]) sound.playbackRate = this.rate;
      this.status.textContent = "";
      if (this.wave && data.wave) this.wave.load(clip.src, this.clipStart, data.wave);
      this.sound.addEventListener("loadedmetadata", () => this.draw(), { once: true });
    } catch (error) {
      this.status.textContent = `${this.strings.audio_error}: ${error.message}`;
    }
  }

  get playing() {
    return this.mode === "alone" ? this.alone : this.sound;
  }

  get span() {
    return [this.audio.start - this.clipStart, this.audio.end - this.clipStart];
  }

  draw() {
    const total = this.sound.duration || 1;
    const [a, b] = this.span;
    this.region.style.left = `${(100 * a) / total}%`;
    this.region.style.width = `${(100 * (b - a)) / total}%`;
    const at = this.mode === "alone" ? this.aloneStart - this.clipStart + this.alone.currentTime : this.sound.currentTime;
    this.head.style.left = `${(100 * at) / total}%`;
    this.label.textContent = seconds(this.clipStart + at, this.lang);
    this.playButton.classList.toggle("ab-on", !this.playing.paused && this.mode === "context");
    this.aloneButton.classList.toggle("ab-on", !this.playing.paused && this.mode === "alone");
  }

  tick() {
    this.draw();
    if (!this.playing.paused) requestAnimationFrame(this.tick);
  }

  start(mode) {
    if (!this.sound.src || !this.alone.src) return;
    this.playing.pause();
    this.mode = mode;
    const sound = this.playing;
    sound.loop = this.loop;
    sound.currentTime = 0;
    sound.play().then(() => requestAnimationFrame(this.tick)).catch((error) => (this.status.textContent = error.message));
  }

  toggle(mode) {
    if (!this.playing.paused && this.mode === mode) {
      this.playing.pause();
      this.draw();
    } else this.start(mode);
  }

  replay() {
    this.start(this.mode);
  }

  setRate(rate) {
    this.rate = rate;
    for (const sound of [this.sound, this.alone]) sound.playbackRate = rate;
    this.rateSelect.value = String(rate);
  }

  setLoop(on) {
    this.loop = on;
    this.loopBox.checked = on;
    this.playing.loop = on;
  }

  onKey(event) {
    if (!this.main || !plainKey(event) || typing(event) || !this.root.isConnected) return;
    if (this.wave && this.wave.onKey(event)) return;
    const step = RATES.indexOf(this.rate);
    const actions = {
      " ": () => this.toggle("context"),
      p: () => this.toggle("context"),
      s: () => this.toggle("alone"),
      r: () => this.replay(),
      l: () => this.setLoop(!this.loop),
      "[": () => this.setRate(RATES[Math.max(0, step - 1)]),
      "-": () => this.setRate(RATES[Math.max(0, step - 1)]),
      "]": () => this.setRate(RATES[Math.min(RATES.length - 1, step + 1)]),
      "+": () => this.setRate(RATES[Math.min(RATES.length - 1, step + 1)]),
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  }

  destroy() {
    this.sound.pause();
    if (this.wave) this.wave.destroyWaves();
    this.alone.pause();
    document.removeEventListener("keydown", this.onKey);
    shared.players.delete(this);
  }
}

function keepInView(parentElement) {
  // The player's Streamlit container sticks to the top of the page while the rest scrolls.
  const box = parentElement.closest('[data-testid="stElementContainer"]');
  if (box) box.classList.add("ab-sticky");
}

function player(component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(".ab-player");
  if (!root) {
    root = el("div", { class: "ab-player" });
    parentElement.appendChild(root);
    root.player = new Player(root, data);
  }
  if (data.main !== false) keepInView(parentElement);
  root.player.load(data);
  return () => {
    if (!root.isConnected) root.player.destroy();
  };
}

// ---------------------------------------------------------------- stretch review desk

const ACTIONS = ["keep", "correct", "unresolved", "nonspeech"];
const HEALTH_PATH = "/_stcore/health";
const SAVE_WAIT_MS = 30000;  // a save unanswered this long, with the server up, is reported as not saved
const RESEND_AFTER_MS = 5000;  // a save unanswered this long, with the server up, is sent again

function same(a, b) {
  return a.split(/\s+/).filter(Boolean).join(" ") === b.split(/\s+/).filter(Boolean).join(" ");
}

function token(step, strings, edge) {
  const shown = step.op === "delete" || step.op === "skip" ? step.reference : step.hypothesis;
  const classes = ["ab-w", `ab-${step.op}`];
  if (step.critical.length) classes.push("ab-critical");
  if (edge) classes.push("ab-edge");
  const parts = [strings[`op_${step.op}`]];
  if (step.op === "substitute") parts.push(`${strings.reference}: ${step.reference}`);
  if (step.critical.length) parts.push(step.critical.map((c) => strings[`critical_${c}`] || c).join(", "));
  if (step.hyp_start !== null && step.hyp_start !== undefined) parts.push(`${decimal(step.hyp_start, strings.locale, 2)}–${decimal(step.hyp_end, strings.locale, 2)} s`);
  if (edge) parts.push(strings[`edge_${edge}`]);
  return el("span", { class: classes.join(" "), title: parts.join(" · "), "data-op": step.op, text: shown || "" });
}

class Desk {
  constructor(root, component) {
    this.root = root;
    this.component = component;
    this.onKey = this.onKey.bind(this);
    this.flush = this.flush.bind(this);
    document.addEventListener("keydown", this.onKey);
    window.addEventListener("pagehide", this.flush);
    shared.desks.add(this);
  }

  update(component) {
    this.component = component;
    const data = component.data;
    const fresh = this.key !== data.item.key || this.version !== data.version;
    this.data = data;
    this.s = data.strings;
    const st = this.state;
    if (fresh && this.key === data.item.key && st && (st.unsent || st.pending || (st.saving && !data.flash))) {
      // The server came back: a new session (its own version count) whose first run drew the desk without
      // answering a save sent meanwhile. The form stays as typed and its draft goes again; the save is
      // sent once more (its token keeps it from being stored twice), then reported as not saved.
      this.version = data.version;
      this.render();
      this.flush();
      if (st.saving) setTimeout(() => this.resend(st), 500);  // once this run of the new session is over
    } else if (fresh) {
      this.key = data.item.key;
      this.version = data.version;
      const draft = data.draft;
      this.state = {
        action: draft ? draft.action : "",
        text: draft ? draft.text : data.item.reference_text,
        note: draft ? draft.note : "",
        ask: "",
        saving: false,
        restored: Boolean(draft),
      };
      this.render();
      // a new stretch: the keys go to the desk again (not to a field, nor to the stretch picker)
      if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
      const main = document.querySelector('[data-testid="stMain"]');
      if (main) main.scrollTo({ top: 0 });
    } else if (data.ask && data.ask !== this.state.ask) {
      this.state.ask = data.ask;
      this.state.saving = false;
      this.renderForm();
    }
  }

  render() {
    const d = this.data;
    const s = this.s;
    this.root.replaceChildren();
    const item = d.item;
    const head = el("div", { class: "ab-head-row" },
      el("span", { class: "ab-pos", "data-testid": "ab-position", text: d.position }),
      el("span", { class: "ab-kind", text: item.kind_label }),
      el("span", { class: "ab-detail", text: item.detail }),
      el("span", { class: "ab-where", text: `${item.recording} · ${item.start_label}–${item.end_label}` }),
      el("span", { class: `ab-chip ab-chip-${item.mine ? "done" : "open"}`, "data-testid": "ab-status", text: item.status_label }),
      el("span", { class: "ab-listeners", text: item.listeners_label }));
    this.root.appendChild(head);
    if (d.flash) {
      this.root.appendChild(el("div", { class: `ab-flash ab-flash-${d.flash.kind}`, "data-testid": "ab-flash", "data-server-ms": d.flash.server_ms ?? "", text: d.flash.text }));
    }
    if (d.notice) this.root.appendChild(el("div", { class: "ab-notice", text: d.notice }));

    const table = el("table", { class: "ab-align", "data-testid": "ab-align" });
    const refRow = el("tr", {}, el("th", { text: s.reference }), el("td", { class: "ab-ref", "data-testid": "ab-reference", text: item.reference_text || s.no_turn }));
    table.appendChild(refRow);
    for (const arm of d.arms) {
      const cell = el("td", { "data-arm": arm.name });
      if (arm.error) cell.appendChild(el("i", { text: arm.error }));
      for (const step of arm.before || []) cell.append(token(step, s, "before"), document.createTextNode(" "));
      for (const step of arm.steps || []) cell.append(token(step, s, null), document.createTextNode(" "));
      for (const step of arm.after || []) cell.append(token(step, s, "after"), document.createTextNode(" "));
      if (!arm.error && !(arm.steps || []).length && !(arm.before || []).length && !(arm.after || []).length) cell.appendChild(el("i", { text: s.nothing }));
      if (arm.note) cell.appendChild(el("small", { class: "ab-note", text: ` ${arm.note}` }));
      table.appendChild(el("tr", {}, el("th", { text: arm.name }), cell));
    }
    this.root.appendChild(table);
    this.root.appendChild(el("div", { class: "ab-legend" },
      ...["equal", "substitute", "delete", "insert"].map((op) => el("span", { class: `ab-w ab-${op}`, text: s[`op_${op}`] })),
      el("span", { class: "ab-w ab-critical", text: s.critical }),
      el("span", { class: "ab-w ab-insert ab-edge", text: s.edge_legend }),
      el("span", { class: "ab-legend-text", text: s.legend })));

    this.form = el("div", { class: "ab-form", "data-testid": "ab-form" });
    this.root.appendChild(this.form);
    this.renderForm();

    const history = el("div", { class: "ab-history" });
    if (d.history.rows.length) {
      history.appendChild(el("div", { class: "ab-subtitle", text: s.history_title }));
      const t = el("table", { class: "ab-history-table", "data-testid": "ab-history" });
      t.appendChild(el("tr", {}, ...d.history.columns.map((c) => el("th", { text: c }))));
      for (const row of d.history.rows) t.appendChild(el("tr", {}, ...row.map((c) => el("td", { text: c }))));
      history.appendChild(t);
    }
    if (d.history.hidden_label) history.appendChild(el("div", { class: "ab-hidden", "data-testid": "ab-hidden", text: d.history.hidden_label }));
    this.root.appendChild(history);
    this.root.appendChild(el("div", { class: "ab-keys", text: s.keys }));
  }

  renderForm() {
    const s = this.s;
    const st = this.state;
    const edited = !same(st.text, this.data.item.reference_text);
    this.form.replaceChildren();
    const choices = el("div", { class: "ab-choices", role: "radiogroup", "aria-label": s.decision });
    ACTIONS.forEach((action, k) => {
      choices.appendChild(el("button", {
        class: `ab-choice${st.action === action ? " ab-chosen" : ""}`,
        role: "radio",
        "aria-checked": String(st.action === action),
        "data-action": action,
        onclick: () => this.choose(action),
      }, el("kbd", { text: String(k + 1) }), el("span", { text: s[`action_${action}`] })));
    });
    this.form.appendChild(choices);
    const textOff = st.action === "unresolved" || st.action === "nonspeech";
    this.text = el("textarea", {
      class: "ab-text",
      rows: "2",
      "data-testid": "ab-text",
      "aria-label": s.text_label,
      disabled: textOff || st.saving,
    });
    this.text.value = st.text;
    this.text.addEventListener("input", () => {
      st.text = this.text.value;
      if (!st.action && !same(st.text, this.data.item.reference_text)) {
        st.action = "correct";
        this.refreshChoices();
      }
      this.changed();
    });
    this.text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        this.save();
      } else if (event.key === "Escape") {
        event.preventDefault();
        this.text.blur();
      }
    });
    this.note = el("input", { class: "ab-note-input", type: "text", "data-testid": "ab-note", "aria-label": s.note_label, placeholder: s.note_label, disabled: st.saving });
    this.note.value = st.note;
    this.note.addEventListener("input", () => {
      st.note = this.note.value;
      this.changed();
    });
    this.note.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        this.save();
      } else if (event.key === "Escape") {
        event.preventDefault();
        this.note.blur();
      }
    });
    this.form.append(
      el("label", { class: "ab-label", text: textOff ? s.text_off : s.text_label }), this.text,
      el("label", { class: "ab-label", text: s.note_hint }), this.note);
    if (edited && st.action !== "correct" && !textOff) this.form.appendChild(el("div", { class: "ab-edited", text: s.edited }));
    if (st.restored) this.form.appendChild(el("div", { class: "ab-restored", "data-testid": "ab-restored", text: s.draft_restored }));
    if (st.ask) {
      const ask = el("div", { class: "ab-ask", role: "alertdialog", "data-testid": "ab-ask", text: s[`ask_${st.ask}`] });
      this.form.appendChild(ask);
    }
    if (st.unsent) this.form.appendChild(el("div", { class: "ab-ask", role: "alert", "data-testid": "ab-save-error", text: s.save_offline }));
    this.saveButton = el("button", { class: "ab-btn ab-primary ab-save", "data-testid": "ab-save", disabled: st.saving, onclick: () => this.save() },
      el("span", { text: st.saving ? s.saving : s.save }));
    const prev = el("button", { class: "ab-btn", "data-testid": "ab-prev", onclick: () => this.move(-1) }, el("span", { text: s.previous }));
    const next = el("button", { class: "ab-btn", "data-testid": "ab-next", onclick: () => this.move(1) }, el("span", { text: s.next }));
    this.form.appendChild(el("div", { class: "ab-actions" }, this.saveButton, prev, next));
  }

  refreshChoices() {
    for (const button of this.form.querySelectorAll(".ab-choice")) {
      const on = button.dataset.action === this.state.action;
      button.classList.toggle("ab-chosen", on);
      button.setAttribute("aria-checked", String(on));
    }
  }

  choose(action) {
    const st = this.state;
    st.action = action;
    st.ask = "";
    this.renderForm();
    this.changed();
    if (action === "correct") {
      this.text.focus();
      this.text.setSelectionRange(this.text.value.length, this.text.value.length);
    }
  }

  changed() {
    this.state.nonce = "";  // another form: another decision, if saved
    clearTimeout(this.timer);
    this.timer = setTimeout(this.flush, 400);
  }

  flush() {
    clearTimeout(this.timer);
    const st = this.state;
    if (!st || !this.data) return;
    const item = this.data.item;
    const body = JSON.stringify({ recording: item.recording, start: item.start, end: item.end, action: st.action, text: st.text, note: st.note });
    if (body === this.lastDraft) return;
    this.lastDraft = body;
    st.pending = true;  // until the store has it
    fetch(this.data.draft_path, { method: "PUT", credentials: "same-origin", keepalive: true, body })
      .then((answer) => {
        if (!answer.ok) throw new Error(answer.statusText);
        if (this.lastDraft === body) st.pending = false;
      })
      .catch(() => (this.lastDraft = null));
  }

  save(confirm = "") {
    const st = this.state;
    if (st.saving) return;
    const edited = !same(st.text, this.data.item.reference_text);
    if (!st.action && !edited) return this.asking("choose");
    if (st.action === "keep" && edited && !confirm) return this.asking("keep_or_correct");
    if ((st.action === "correct" || (!st.action && edited)) && !st.text.trim()) return this.asking("text");
    st.saving = true;
    st.ask = "";
    st.unsent = false;
    // one token per form as saved: a retry of the same form is stored once, even if the first try got through
    st.nonce = st.nonce || `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    this.flush();
    this.renderForm();
    st.sent = { key: this.key, action: st.action, text: st.text, note: st.note, confirm, nonce: st.nonce };
    st.sentAt = Date.now();
    this.component.setTriggerValue("save", { ...st.sent, at: st.sentAt });
    this.watch(st);
  }

  resend(st) {
    // A save sent while the page was reconnecting, or answered only by a new session's first run, goes
    // once more; its token keeps it from being stored twice.
    if (this.state !== st || !st.saving) return;
    st.sentAt = Date.now();
    this.component.setTriggerValue("save", { ...st.sent, at: st.sentAt });
  }

  watch(st) {
    // While the server is down the save goes nowhere: say so, and give the form back as it was.
    const since = Date.now();
    const check = async () => {
      if (this.state !== st || !st.saving) return;
      const up = await fetch(HEALTH_PATH, { cache: "no-store" }).then((answer) => answer.ok, () => false);
      if (this.state !== st || !st.saving) return;
      if (up && Date.now() - since < SAVE_WAIT_MS) {
        if (Date.now() - st.sentAt > RESEND_AFTER_MS) this.resend(st);
        setTimeout(check, 1000);
        return;
      }
      st.saving = false;
      st.unsent = true;
      this.lastDraft = null;  // the draft goes again with the next change or save
      this.renderForm();
    };
    setTimeout(check, 1000);
  }

  asking(kind) {
    this.state.ask = kind;
    this.renderForm();
  }

  move(delta) {
    this.flush();
    this.component.setTriggerValue("move", { delta, at: Date.now() });
  }

  onKey(event) {
    if (!this.root.isConnected || !plainKey(event) || typing(event) || this.state.saving) return;
    const st = this.state;
    const key = event.key;
    if (st.ask === "keep_or_correct" && ["1", "2", "Escape"].includes(key)) {
      event.preventDefault();
      if (key === "1") {
        st.text = this.data.item.reference_text;
        this.save("keep");
      } else if (key === "2") {
        st.action = "correct";
        this.save("correct");
      } else this.asking("");
      return;
    }
    if (["1", "2", "3", "4"].includes(key)) {
      event.preventDefault();
      this.choose(ACTIONS[Number(key) - 1]);
    } else if (key === "Enter") {
      event.preventDefault();
      this.save();
    } else if (key === "j") {
      event.preventDefault();
      this.move(1);
    } else if (key === "k") {
      event.preventDefault();
      this.move(-1);
    } else if (key === "e") {
      event.preventDefault();
      this.text.focus();
    } else if (key === "n") {
      event.preventDefault();
      this.note.focus();
    } else if (key === "Escape" && st.ask) {
      event.preventDefault();
      this.asking("");
    }
  }

  destroy() {
    this.flush();
    document.removeEventListener("keydown", this.onKey);
    window.removeEventListener("pagehide", this.flush);
    shared.desks.delete(this);
  }
}

function review(component) {
  const { parentElement } = component;
  let root = parentElement.querySelector(".ab-desk");
  if (!root) {
    root = el("div", { class: "ab-desk", "data-testid": "ab-desk" });
    parentElement.appendChild(root);
    root.desk = new Desk(root, component);
  }
  root.desk.update(component);
  return () => {
    if (!root.isConnected) root.desk.destroy();
  };
}

// ---------------------------------------------------------------- blind form drafts

class BlindKeeper {
  // The blind page's form is Streamlit's own: its fields are read by their labels after each change
  // and sent as a draft 0.4 s later (at once when the form is submitted or the page left), and again
  // every 2 s while the server does not answer.
  constructor() {
    this.changed = this.changed.bind(this);
    this.flush = this.flush.bind(this);
    document.addEventListener("input", this.changed, true);
    document.addEventListener("change", this.changed, true);
    document.addEventListener("click", (event) => {
      if (event.target.closest && event.target.closest('[data-testid="stFormSubmitButton"]')) this.flush();
    }, true);
    document.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) this.flush();
    }, true);
    window.addEventListener("pagehide", this.flush);
  }

  update(component) {
    const stretch = JSON.stringify(component.data.stretch);
    if (this.stretch !== stretch) this.flush();  // what was typed on the stretch before goes under its own name
    this.stretch = stretch;
    this.data = component.data;
    this.anchor = component.parentElement;
  }

  form() {
    // the blind page's form, while the keeper is on the page: the one holding the text field
    if (!this.data || !this.anchor || !this.anchor.isConnected) return null;
    const label = CSS.escape(this.data.fields[0].label);
    const text = document.querySelector(`[data-testid="stForm"] textarea[aria-label="${label}"]`);
    return text ? text.closest('[data-testid="stForm"]') : null;
  }

  read(form) {
    const fields = {};
    for (const field of this.data.fields) {
      const label = CSS.escape(field.label);
      if (field.kind === "radio") {
        const options = [...form.querySelectorAll(`[role="radiogroup"][aria-label="${label}"] input[type="radio"]`)];
        const chosen = options.findIndex((option) => option.checked);
        if (chosen >= 0) fields[field.name] = String(chosen);
      } else {
        const input = form.querySelector(`textarea[aria-label="${label}"], input[aria-label="${label}"]`);
        if (input) fields[field.name] = input.value;
      }
    }
    return fields;
  }

  changed(event) {
    const form = this.form();
    if (!form || !form.contains(event.target)) return;
    this.pending = JSON.stringify({ ...this.data.stretch, fields: this.read(form) });
    clearTimeout(this.timer);
    this.timer = setTimeout(this.flush, 400);
  }

  flush() {
    clearTimeout(this.timer);
    const body = this.pending;
    if (!body || !this.data) return;
    this.pending = null;
    fetch(this.data.path, { method: "PUT", credentials: "same-origin", keepalive: true, body })
      .then((answer) => {
        if (!answer.ok && answer.status >= 500) throw new Error(answer.statusText);
      })
      .catch(() => {
        if (this.pending === null) this.pending = body;  // not kept: again in 2 s, unless typed over
        clearTimeout(this.timer);
        this.timer = setTimeout(this.flush, 2000);
      });
  }
}

function blindKeeper(component) {
  shared.blindKeeper = shared.blindKeeper || new BlindKeeper();
  shared.blindKeeper.update(component);
}

export default function (component) {
  const mode = component.data && component.data.mode;
  if (mode === "session") {
    session(component);
    return undefined;
  }
  if (mode === "player") return player(component);
  if (mode === "review") return review(component);
  if (mode === "blind_keeper") {
    blindKeeper(component);
    return undefined;
  }
  return undefined;
}
