// The waveform view under the player: wavesurfer.js (vendored in vendor/, with its regions and
// spectrogram plugins) draws the clip the player plays, the stretch's span, and the listener's own
// marks (confirmed speech, non-speech, a word's time) as regions one drags to set a boundary; lanes
// below give the word boundaries of the reference (or the listener's own turns) and of each arm the
// page shows. A click seeks. Keys: arrows move the cursor, m m select, x f w store the selection,
// b picks a boundary, , . nudge it, Delete removes its mark. Loaded in one module with ablate.js,
// which creates it (WaveSurfer is the global the vendored UMD builds define).

const WAVE_COLORS = {
  nonspeech: "rgba(214, 69, 65, 0.30)",
  speech: "rgba(46, 139, 87, 0.25)",
  word: "rgba(59, 91, 219, 0.30)",
  selection: "rgba(240, 180, 20, 0.40)",
  span: "rgba(255, 75, 75, 0.14)",
};
const NUDGE_S = 0.01;

function waveSeconds(value, lang) {
  return value.toLocaleString(lang === "pt" ? "pt-BR" : "en", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

class Waveform {
  constructor(player) {
    this.player = player;
    this.s = player.strings;
    this.root = el("div", { class: "ab-wave", "data-testid": "ab-wave" });
    this.canvas = el("div", { class: "ab-wave-canvas", "data-testid": "ab-wave-canvas", title: this.s.wave_title });
    this.spectrum = el("div", { class: "ab-wave-spectrum", "data-testid": "ab-wave-spectrum" });
    this.lanes = el("div", { class: "ab-lanes", "data-testid": "ab-lanes" });
    this.status = el("div", { class: "ab-wave-status", "data-testid": "ab-wave-status", "aria-live": "polite" });
    this.root.append(this.canvas, this.spectrum, this.lanes, el("div", { class: "ab-wave-keys", text: this.s.wave_keys }), this.status);
    this.regionsById = new Map();
    this.timers = new Map();
  }

  load(src, clipStart, wave) {
    this.destroyWaves();
    this.clipStart = clipStart;
    this.wave = wave;
    this.marks = wave.marks.slice();
    this.selection = null;
    this.pending = null;
    this.edge = null;
    this.root.dataset.ready = "false";
    this.ws = WaveSurfer.create({
      container: this.canvas,
      media: this.player.sound,
      url: src,
      height: 64,
      waveColor: "#8d93a5",
      progressColor: "#3b5bdb",
      cursorColor: "#d9480f",
      cursorWidth: 2,
      normalize: true,
      interact: true,
    });
    this.regions = this.ws.registerPlugin(WaveSurfer.Regions.create());
    this.ws.registerPlugin(WaveSurfer.Spectrogram.create({ container: this.spectrum, height: 64, labels: false, fftSamples: 256 }));
    this.ws.on("decode", () => this.ready());
    this.ws.on("error", (error) => this.say(`${this.s.audio_error}: ${error && error.message ? error.message : error}`));
  }

  // ------------------------------------------------------------------ drawing

  ready() {
    const [a, b] = this.player.span;
    const span = this.regions.addRegion({ id: "ab-span", start: a, end: b, color: WAVE_COLORS.span, drag: false, resize: false });
    span.element.style.pointerEvents = "none"; // a click inside the stretch seeks, as anywhere else
    span.element.setAttribute("data-testid", "ab-wave-span");
    this.regions.enableDragSelection({ color: WAVE_COLORS.selection });
    this.regions.on("region-created", (region) => {
      // regions this view adds have ids of its own; any other was drawn by dragging on the waveform
      if (!String(region.id).startsWith("ab-")) this.select(region);
    });
    this.regions.on("region-updated", (region) => {
      if (region.abMark) this.moved(region);
    });
    this.regions.on("region-clicked", (region, event) => {
      event.stopPropagation();
      this.seekAt(event.clientX);
      if (region.abMark) this.pickEdge(region, Math.abs(event.clientX - region.element.getBoundingClientRect().left) < 8 ? "start" : "end");
    });
    this.drawMarks();
    this.drawLanes();
    this.root.dataset.ready = "true";
  }

  get length() {
    return this.ws ? this.ws.getDuration() || 0 : 0;
  }

  drawMarks() {
    for (const region of this.regionsById.values()) region.remove();
    this.regionsById.clear();
    const length = this.length;
    for (const mark of this.marks) {
      const start = mark.start - this.clipStart;
      const end = mark.end - this.clipStart;
      if (end <= 0 || start >= length) continue;
      const inside = start >= 0 && end <= length;
      const region = this.regions.addRegion({
        id: `ab-mark-${mark.id}`,
        start: Math.max(0, start),
        end: Math.min(length, end),
        color: WAVE_COLORS[mark.kind],
        content: mark.kind === "word" ? mark.label : this.s[`wave_${mark.kind}`],
        drag: inside,
        resize: inside,
      });
      region.abMark = mark;
      region.element.setAttribute("data-testid", "ab-mark");
      region.element.dataset.kind = mark.kind;
      this.regionsById.set(mark.id, region);
    }
    if (this.edge) {
      const region = this.regionsById.get(this.edge.id);
      if (region) this.pickEdge(region, this.edge.side, false);
      else this.edge = null;
    }
  }

  drawLanes() {
    this.lanes.replaceChildren();
    const length = this.length || 1;
    const at = (t) => `${(100 * (t - this.clipStart)) / length}%`;
    const wide = (a, b) => `${(100 * (b - a)) / length}%`;
    const visible = (a, b) => a !== null && b !== null && b > this.clipStart && a < this.clipStart + length;
    for (const lane of this.wave.lanes) {
      const row = el("div", { class: "ab-lane", "data-lane": lane.name }, el("span", { class: "ab-lane-name", text: lane.name }));
      for (const turn of lane.turns || []) {
        if (!visible(turn.start, turn.end)) continue;
        row.append(el("span", { class: "ab-lane-turn", style: `left:${at(turn.start)};width:${wide(turn.start, turn.end)}`, title: `${waveSeconds(turn.start, this.player.lang)}–${waveSeconds(turn.end, this.player.lang)} s` }));
      }
      for (const word of lane.words) {
        if (!visible(word.start, word.end)) continue;
        row.append(el("span", {
          class: "ab-lane-word",
          style: `left:${at(word.start)};width:${wide(word.start, word.end)}`,
          title: `${word.text} · ${waveSeconds(word.start, this.player.lang)}–${waveSeconds(word.end, this.player.lang)} s`,
          text: word.text,
          onclick: () => this.selectTimes(word.start - this.clipStart, word.end - this.clipStart),
        }));
      }
      this.lanes.append(row);
    }
  }

  say(text) {
    this.status.textContent = text;
  }

  // ------------------------------------------------------------------ cursor, selection, edges

  seekAt(clientX) {
    const box = this.canvas.getBoundingClientRect();
    if (box.width && this.length) this.ws.setTime(Math.min(this.length, Math.max(0, ((clientX - box.left) / box.width) * this.length)));
  }

  move(delta) {
    this.ws.setTime(Math.min(this.length, Math.max(0, this.ws.getCurrentTime() + delta)));
  }

  select(region) {
    if (this.selection && this.selection !== region) this.selection.remove();
    this.selection = region;
    region.element.setAttribute("data-testid", "ab-selection");
    this.say(this.s.wave_selected.replace("{from}", waveSeconds(this.clipStart + region.start, this.player.lang)).replace("{to}", waveSeconds(this.clipStart + region.end, this.player.lang)));
  }

  selectTimes(start, end) {
    this.selections = (this.selections || 0) + 1;
    const region = this.regions.addRegion({ id: `ab-selection-${this.selections}`, start: Math.max(0, start), end: Math.min(this.length, end), color: WAVE_COLORS.selection });
    this.select(region);
  }

  markPoint() {
    // m: the first press sets where the selection starts, the second where it ends
    const now = this.ws.getCurrentTime();
    if (this.pending === null) {
      this.pending = now;
      this.regions.getRegions().filter((r) => r.id === "ab-pending").forEach((r) => r.remove());
      this.regions.addRegion({ id: "ab-pending", start: now, color: "#d9480f" });
      this.say(this.s.wave_pending.replace("{at}", waveSeconds(this.clipStart + now, this.player.lang)));
      return;
    }
    const [a, b] = [Math.min(this.pending, now), Math.max(this.pending, now)];
    this.clearPending();
    if (b - a < 0.01) return this.say(this.s.wave_too_short);
    this.selectTimes(a, b);
  }

  clearPending() {
    this.pending = null;
    this.regions.getRegions().filter((r) => r.id === "ab-pending").forEach((r) => r.remove());
  }

  edges() {
    const all = [];
    for (const region of this.regionsById.values()) {
      if (!region.drag) continue;
      all.push({ t: region.start, id: region.abMark.id, side: "start" }, { t: region.end, id: region.abMark.id, side: "end" });
    }
    return all.sort((x, y) => x.t - y.t || (x.side === "end" ? -1 : 1));
  }

  nextEdge() {
    // b: the boundary after the one picked (round the list), or the first at or after the cursor
    const all = this.edges();
    if (!all.length) return this.say(this.s.wave_no_marks);
    const picked = this.edge ? all.findIndex((e) => e.id === this.edge.id && e.side === this.edge.side) : -1;
    const now = this.ws.getCurrentTime() - 0.005;
    const following = picked >= 0 ? all[(picked + 1) % all.length] : all.find((e) => e.t >= now) || all[0];
    this.pickEdge(this.regionsById.get(following.id), following.side);
  }

  pickEdge(region, side, seek = true) {
    for (const other of this.regionsById.values()) delete other.element.dataset.edge;
    region.element.dataset.edge = side;
    this.edge = { id: region.abMark.id, side, t: region[side] };
    if (seek) this.ws.setTime(region[side]);
    const mark = region.abMark;
    const name = mark.kind === "word" ? mark.label : this.s[`wave_${mark.kind}`];
    this.say(this.s[`wave_edge_${side}`].replace("{mark}", name).replace("{at}", waveSeconds(this.clipStart + region[side], this.player.lang)));
  }

  nudge(delta) {
    if (!this.edge) return this.say(this.s.wave_no_edge);
    const region = this.regionsById.get(this.edge.id);
    if (!region) return;
    const start = this.edge.side === "start" ? Math.min(region.end - 0.01, Math.max(0, region.start + delta)) : region.start;
    const end = this.edge.side === "end" ? Math.max(region.start + 0.01, Math.min(this.length, region.end + delta)) : region.end;
    region.setOptions({ start, end });
    this.edge.t = region[this.edge.side];
    this.ws.setTime(this.edge.t);
    this.moved(region);
  }

  // ------------------------------------------------------------------ storing

  wordAt(a, b) {
    // the word a selection times: the reference word under its middle, else the first or last word
    // of the turn it lies in (the boundary words the scorer reads), whichever half it is in
    const middle = this.clipStart + (a + b) / 2;
    const lane = this.wave.lanes[0];
    if (!lane) return "";
    const timed = lane.words.find((w) => w.start <= middle && middle <= w.end);
    if (timed) return timed.text;
    const turn = (lane.turns || []).find((u) => u.start <= middle && middle <= u.end && u.text);
    if (!turn) return "";
    const words = turn.text.split(/\s+/).filter(Boolean);
    return middle < (turn.start + turn.end) / 2 ? words[0] : words[words.length - 1];
  }

  async store(kind) {
    const region = this.selection;
    if (!region) return this.say(this.s.wave_no_selection);
    const label = kind === "word" ? this.wordAt(region.start, region.end) : "";
    if (kind === "word" && !label) return this.say(this.s.wave_no_word);
    const body = { kind, start: this.clipStart + region.start, end: this.clipStart + region.end, label };
    this.selection = null;
    region.remove();
    const answer = await this.send(body);
    if (answer) this.say(this.s.wave_stored.replace("{mark}", kind === "word" ? label : this.s[`wave_${kind}`]).replace("{from}", waveSeconds(body.start, this.player.lang)).replace("{to}", waveSeconds(body.end, this.player.lang)));
  }

  moved(region) {
    // a drag or a nudge stores the moved mark (it replaces the old one) once the boundary rests
    const mark = region.abMark;
    clearTimeout(this.timers.get(mark.id));
    this.timers.set(mark.id, setTimeout(async () => {
      this.timers.delete(mark.id);
      const answer = await this.send({ kind: mark.kind, label: mark.label, start: this.clipStart + region.start, end: this.clipStart + region.end, replaces: mark.id });
      if (answer && answer.mark && this.edge && this.edge.id === mark.id) this.edge.id = answer.mark.id;
      if (answer) this.drawMarks();
    }, 400));
  }

  async withdraw() {
    if (!this.edge) {
      if (this.selection) {
        this.selection.remove();
        this.selection = null;
      }
      return this.say(this.s.wave_no_edge);
    }
    const id = this.edge.id;
    this.edge = null;
    if (await this.send({ withdraw: id })) this.say(this.s.wave_withdrawn);
  }

  async send(body) {
    try {
      const answer = await fetch(this.wave.path, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ recording: this.wave.recording, ...body }),
      });
      if (!answer.ok) throw new Error(await answer.text());
      const result = await answer.json();
      this.marks = result.marks;
      this.drawMarks();
      return result;
    } catch (error) {
      this.say(`${this.s.wave_not_stored}: ${error.message}`);
      this.drawMarks();
      return null;
    }
  }

  // ------------------------------------------------------------------ keys

  onKey(event) {
    if (!this.ws || this.root.dataset.ready !== "true") return false;
    const big = event.shiftKey ? 1 : 0.1;
    const actions = {
      ArrowLeft: () => this.move(-big),
      ArrowRight: () => this.move(big),
      m: () => this.markPoint(),
      x: () => this.store("nonspeech"),
      f: () => this.store("speech"),
      w: () => this.store("word"),
      b: () => this.nextEdge(),
      ",": () => this.nudge(-NUDGE_S),
      ".": () => this.nudge(NUDGE_S),
      Delete: () => this.withdraw(),
      Backspace: () => this.withdraw(),
    };
    const action = actions[event.key];
    if (!action) return false;
    event.preventDefault();
    action();
    return true;
  }

  destroyWaves() {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.regionsById.clear();
    if (this.ws) {
      // the player keeps its audio element: wavesurfer only borrowed it
      this.ws.unAll();
      this.ws.destroy();
      this.ws = null;
    }
    this.canvas.replaceChildren();
    this.spectrum.replaceChildren();
  }
}
