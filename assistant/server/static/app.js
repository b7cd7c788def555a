// The browser demo: microphone -> AudioWorklet (16 kHz PCM16) -> websocket (protocol v1, docs/protocol.md) ->
// every server event shown as it arrives. Plain modern JS, no build step, nothing from a CDN.
// Text from the server is only ever set with textContent, never parsed as HTML.

import { ReplyPlayer } from "./player.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const NOW = params.get("now"); // a fixed reference time for reproducible demos and tests: ?now=2026-12-02T10:00:00
const TIMEZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
// What the recognizer hears: English, Chinese (with English names in it too), or either, told apart in each
// utterance (auto). ?lang=zh or ?lang=auto preselects it.
const LANGUAGES = ["en", "zh", "auto"];
const WS_URL = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
const FRAME_MS = 20;
// A server that needs a token is opened as /#token=TOKEN: the fragment never reaches a server or a Referer. It is
// kept for this tab only and taken out of the address bar.
const TOKEN = (() => {
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) {
    sessionStorage.setItem("assistant-token", given);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem("assistant-token");
})();
// One conversation per tab, across reconnects: what it booked stays its own to undo, move or cancel.
const CONVERSATION = sessionStorage.getItem("assistant-conversation") || `page-${crypto.randomUUID()}`;
sessionStorage.setItem("assistant-conversation", CONVERSATION);

const state = {
  listening: false,
  socket: null,
  audio: null, // {context, stream, node}
  sentFrames: 0, // 20 ms frames sent on this connection: audio time = sentFrames * 20 ms
  sentAt: [], // performance.now() when frame i went out, to measure voice-to-action on this clock
  speechEnd: new Map(), // utterance -> audio_ms where speech ended
  retryMs: 1000,
  retryTimer: null,
  day: null,
  // spoken replies (player.js); what it did is kept for tests and curious readers: window.assistantReplies
  player: null,
  replies: { started: [], stopped: [] },
};
window.assistantReplies = state.replies;
state.player = new ReplyPlayer((speaking) => {
  const badge = $("speaking");
  badge.textContent = speaking ? "speaking" : "quiet";
  badge.className = `badge ${speaking ? "speaking-on" : "speaking-off"}`;
}, (reply, inSeconds) => {
  // where in the audio sent so far the reply's sound begins: the server looks for its echo there
  const socket = state.socket;
  if (!socket || socket.readyState !== WebSocket.OPEN) return;
  const atMs = Math.round(state.sentFrames * FRAME_MS + Math.max(0, inSeconds) * 1000);
  socket.send(JSON.stringify({ type: "playback", reply, state: "started", played_ms: 0, at_ms: atMs }));
});

// ---- status and errors, in words ----------------------------------------------------------------------------
function showError(text) {
  const box = $("error");
  box.textContent = text;
  box.hidden = !text;
}

function setConnection(text, kind) {
  const badge = $("connection");
  badge.textContent = text;
  badge.className = `badge conn-${kind}`;
}

function setVad(speaking) {
  const badge = $("vad");
  badge.textContent = speaking ? "speaking" : "silent";
  badge.className = `badge ${speaking ? "vad-speaking" : "vad-silent"}`;
}

function micErrorText(error) {
  switch (error && error.name) {
    case "NotAllowedError":
    case "SecurityError":
      return "Microphone permission was denied. Allow this page to use the microphone (the icon in the address bar), then press Start talking again.";
    case "NotFoundError":
    case "OverconstrainedError":
      return "No microphone was found. Connect one and press Start talking again.";
    case "NotReadableError":
      return "The microphone is busy in another application. Close it there and try again.";
    default:
      return `The microphone could not be started: ${error && error.message ? error.message : error}.`;
  }
}

// ---- microphone --------------------------------------------------------------------------------------------
async function startMicrophone() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    throw Object.assign(new Error("this browser (or a page not served over https or localhost) has no microphone access"), { name: "SecurityError" });
  }
  const stream = await navigator.mediaDevices.getUserMedia({
    // The browser's noise suppression and gain control reshape speech in ways the recognizer was not trained on.
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext();
  await context.audioWorklet.addModule("/static/capture-worklet.js");
  const source = context.createMediaStreamSource(stream);
  const node = new AudioWorkletNode(context, "capture-16k");
  node.port.onmessage = (event) => onFrame(event.data);
  source.connect(node);
  await context.resume();
  state.audio = { context, stream, node };
}

function stopMicrophone() {
  if (!state.audio) return;
  state.audio.node.port.onmessage = null;
  state.audio.stream.getTracks().forEach((t) => t.stop());
  state.audio.context.close();
  state.audio = null;
  $("level").value = 0;
}

function onFrame({ pcm, peak }) {
  $("level").value = peak;
  const socket = state.socket;
  if (socket && socket.readyState === WebSocket.OPEN && socket.ready) {
    socket.send(pcm);
    state.sentAt[state.sentFrames] = performance.now();
    state.sentFrames += 1;
  }
}

// ---- websocket ---------------------------------------------------------------------------------------------
// The token goes in the handshake, as a subprotocol beside "voice-assistant" (a page cannot set a websocket's
// headers): the server checks it before the connection takes a place. Its UTF-8 in base64url, no padding.
function tokenProtocols() {
  if (!TOKEN) return [];
  const bytes = new TextEncoder().encode(TOKEN);
  const encoded = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return ["voice-assistant", `voice-assistant.token.${encoded}`];
}

function connect() {
  clearTimeout(state.retryTimer);
  const socket = new WebSocket(WS_URL, tokenProtocols());
  socket.binaryType = "arraybuffer";
  socket.ready = false;
  state.socket = socket;
  setConnection("connecting", "pending");
  socket.onopen = () => {
    const start = { type: "start", sample_rate: 16000, format: "pcm_s16le", channels: 1, timezone: TIMEZONE,
      conversation_id: CONVERSATION, language: $("language").value, speech: $("speak").checked };
    if (NOW) start.now = NOW;
    socket.opened = true;
    socket.send(JSON.stringify(start));
  };
  socket.onmessage = (message) => {
    if (message.data instanceof ArrayBuffer) { // a spoken reply's audio
      if (state.socket === socket) state.player.frame(message.data);
      return;
    }
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      showError("The server sent something that is not JSON; is this the assistant's address?");
      return;
    }
    onEvent(socket, event);
  };
  socket.onclose = () => {
    if (state.socket !== socket) return; // an older connection, already replaced
    state.socket = null;
    setVad(false);
    if (state.listening) {
      setConnection("reconnecting", "down");
      // A refused handshake looks the same to a page whatever the reason: say the likely ones.
      showError(socket.opened ? `The connection to the server (${WS_URL}) was lost. Reconnecting…`
        : `The server (${WS_URL}) did not take the connection: it may be busy or down${TOKEN ?
          ", or the token in /#token= is wrong" : ""}. Trying again…`);
      state.retryTimer = setTimeout(connect, state.retryMs);
      state.retryMs = Math.min(state.retryMs * 2, 8000);
    } else {
      setConnection("not connected", "idle");
    }
  };
}

function onEvent(socket, event) {
  switch (event.type) {
    case "ready":
      socket.ready = true;
      state.sentFrames = 0;
      state.sentAt = [];
      state.speechEnd.clear();
      state.retryMs = 1000;
      setConnection("listening", "up");
      showError("");
      break;
    case "speech_start":
      if (state.player.playing) { // barge-in: the speaker cut in; silence now, and tell the server where
        const number = state.player.reply.number;
        const report = state.player.stop();
        if (report) {
          state.replies.stopped.push({ reply: number, played_ms: report.played_ms, at: performance.now() });
          if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(report));
        }
      }
      setVad(true);
      $("partial").textContent = "";
      $("forming").textContent = "";
      showTurn(null);
      break;
    case "speech_end":
      setVad(false);
      if (!event.discarded) state.speechEnd.set(event.utterance, event.audio_ms);
      break;
    case "partial":
      $("partial").textContent = event.text;
      $("forming").textContent = formingText(event);
      break;
    case "turn":
      showTurn(event);
      break;
    case "transcript":
      $("partial").textContent = "";
      $("forming").textContent = "";
      showTurn(null);
      $("transcript").textContent = event.text || "(no words)";
      $("transcript").dataset.text = event.text;
      $("transcript").lang = event.language === "zh" ? "zh-CN" : "en"; // the right font and line breaking
      $("intent").textContent = "";
      break;
    case "intent":
      showIntent(event);
      break;
    case "result":
      showResult(event);
      break;
    case "latency":
      showLatency(event);
      break;
    case "reply_audio":
      state.player.begin(event);
      state.replies.started.push({ reply: event.reply, text: event.text, at: performance.now() });
      $("spoken").textContent = event.text;
      $("spoken").lang = event.language === "zh" ? "zh-CN" : "en";
      break;
    case "reply_audio_end":
      state.player.end(event);
      break;
    case "error":
      if (event.code === "unauthorized") {
        if (state.listening) toggle(); // stop: reconnecting without a token would only be refused again
        showError("This server needs an access token: open this page as /#token=YOUR_TOKEN.");
      } else if (event.code === "store_unavailable") {
        // the calendar server is down: nothing was booked, and the same request can simply be said again
        showError(`${event.message.charAt(0).toUpperCase()}${event.message.slice(1)}.`);
      } else if (event.code === "language_unavailable") {
        if (state.listening) toggle(); // e.g. Chinese still being built: its message says how far along
        showError(`${event.message}.`);
      } else {
        showError(`The server refused something: ${event.message} (${event.code}).`);
      }
      break;
  }
}

// ---- the request forming while it is spoken, and the end-of-turn state ---------------------------------------
const SLOT_WORDS = {start_time: "the time", date: "the day", room: "the room", end_time: "the end time",
  duration: "how long", new_time: "the new time"};

function formingText(event) {
  // a dry run: what the words so far would do; nothing is booked until the turn ends
  if (!event.intent || !event.result) return "";
  const result = event.result;
  if (result.type === "command") {
    const c = result.command;
    return `forming: ${c.action.replace("_", " ")} ${c.room} ${c.start.slice(0, 16).replace("T", " ")}`;
  }
  if (result.type === "clarify") return `forming: ${event.intent.replace("_", " ")} (needs ${result.missing.join(", ")})`;
  return `forming: ${event.intent.replace("_", " ")}`;
}

function showTurn(event) {
  const box = $("turn");
  if (!event || event.verdict === "unsure") {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.hidden = false;
  box.className = `turn turn-${event.verdict}`;
  box.dataset.verdict = event.verdict;
  if (event.verdict === "incomplete") {
    const wanted = (event.waiting_for || []).map((s) => SLOT_WORDS[s] || s);
    box.textContent = wanted.length ? `waiting for ${wanted.join(" and ")}...` : "waiting for the rest...";
  } else {
    box.textContent = "got it";
  }
}

// ---- transcript with slot spans -----------------------------------------------------------------------------
function showIntent(event) {
  const box = $("transcript");
  // the words understood: another of the recognizer's readings when understanding chose one
  const text = event.text || box.dataset.text || "";
  box.textContent = "";
  const legend = new Set();
  let at = 0;
  const slots = [...event.slots].filter((s) => Number.isInteger(s.start) && s.end <= text.length)
    .sort((a, b) => a.start - b.start);
  for (const slot of slots) {
    if (slot.start < at) continue;
    box.append(text.slice(at, slot.start));
    const mark = document.createElement("mark");
    mark.className = `slot slot-${slot.name}`;
    mark.dataset.slot = slot.name;
    mark.title = slot.name;
    mark.textContent = text.slice(slot.start, slot.end);
    const tag = document.createElement("span");
    tag.className = "slot-name";
    tag.textContent = slot.name;
    mark.append(tag);
    box.append(mark);
    legend.add(slot.name);
    at = slot.end;
  }
  box.append(text.slice(at));
  $("intent").textContent = `${event.intent.replaceAll("_", " ")} · confidence ${(event.confidence * 100).toFixed(1)} %`;
  const list = $("slot-legend");
  list.textContent = "";
  for (const name of legend) {
    const item = document.createElement("li");
    item.className = `slot slot-${name}`;
    item.textContent = name;
    list.append(item);
  }
}

// ---- the command card ---------------------------------------------------------------------------------------
const ACTIONS = { book_meeting: "Book", cancel_meeting: "Cancel", reschedule_meeting: "Move" };

function clock(iso) {
  return iso.slice(11, 16); // the server writes times in the request's zone: show them as written
}

function day(iso) {
  const [y, m, d] = iso.slice(0, 10).split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d)).toLocaleDateString(undefined, { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
}

function field(card, name, value) {
  const row = document.createElement("div");
  row.className = "field";
  const label = document.createElement("span");
  label.className = "field-name";
  label.textContent = name;
  const text = document.createElement("span");
  text.className = `field-value field-${name.toLowerCase()}`;
  text.textContent = value;
  row.append(label, text);
  card.append(row);
}

function renderResult(card, result) {
  card.textContent = "";
  card.className = `card card-${result.type}`;
  const title = document.createElement("p");
  title.className = "card-title";
  card.append(title);
  if (result.type === "command") {
    const c = result.command;
    const done = result.committed ? "done" : result.executable ? "not run" : "not possible";
    // a booking changed because the speaker went on is shown as the booking it now is, not as a move
    const changed = Boolean(c.amends);
    const [start, end] = changed && c.new_start ? [c.new_start, c.new_end] : [c.start, c.end];
    title.textContent = `${ACTIONS[changed ? "book_meeting" : c.action] || c.action} · ${done}${changed ? " · changed" : ""}`;
    field(card, "Room", c.room.charAt(0).toUpperCase() + c.room.slice(1));
    field(card, "Day", day(start));
    field(card, "Time", `${clock(start)}–${clock(end)}`);
    if (c.new_start && !changed) field(card, "Moved to", `${day(c.new_start)} ${clock(c.new_start)}–${clock(c.new_end)}`);
    if (c.title) field(card, "Title", c.title);
    if (c.attendees && c.attendees.length) field(card, "With", c.attendees.join(", "));
    if (!result.executable && result.reason) field(card, "Why", result.reason);
    for (const assumption of c.assumptions || []) field(card, "Assumed", assumption);
  } else if (result.type === "clarify") {
    title.textContent = "Question";
    const q = document.createElement("p");
    q.className = "question";
    q.textContent = result.question;
    card.append(q);
  } else if (result.type === "answer") {
    title.textContent = "Answer";
    const a = document.createElement("p");
    a.textContent = result.text;
    card.append(a);
  } else {
    title.textContent = "Not a booking request";
    const r = document.createElement("p");
    r.textContent = result.reason;
    card.append(r);
  }
}

function showResult(event) {
  const result = event.result;
  const card = $("card");
  // a result that replaces the last one (the speaker went on after a pause) changes that card in place
  const amends = result.amends || (result.command && result.command.amends);
  if (!card.classList.contains("empty") && !amends) { // the previous result moves down to "Earlier"
    const item = document.createElement("li");
    item.append(...card.cloneNode(true).childNodes);
    item.className = card.className;
    $("history").prepend(item);
    while ($("history").children.length > 10) $("history").lastChild.remove();
  }
  renderResult(card, result);
  const voiced = state.speechEnd.get(event.utterance);
  if (voiced !== undefined) {
    const sent = state.sentAt[Math.max(0, Math.ceil(voiced / FRAME_MS) - 1)];
    if (sent !== undefined) state.clientVoiceToAction = { utterance: event.utterance, ms: performance.now() - sent };
  }
  if (result.type === "command" && result.committed) loadDay(result.command.new_start || result.command.start);
}

// ---- latency waterfall ------------------------------------------------------------------------------------
const STAGES = [
  ["speech_end_decided", "end of speech decided (VAD hangover)"],
  ["transcript", "speech recognition"],
  ["intent", "intent and slots"],
  ["result", "booking and result"],
  ["reply_audio", "spoken reply: first audio"],
];

function showLatency(event) {
  const box = $("waterfall");
  box.textContent = "";
  box.hidden = false;
  const stages = event.stages_ms;
  const client = state.clientVoiceToAction && state.clientVoiceToAction.utterance === event.utterance
    ? state.clientVoiceToAction.ms : null;
  const total = Math.max(client || 0, stages.result || 0, stages.reply_audio || 0, 1);
  let before = 0;
  for (const [key, label] of STAGES) {
    if (!(key in stages)) continue;
    const row = document.createElement("div");
    row.className = "wf-row";
    row.dataset.stage = key;
    const name = document.createElement("span");
    name.className = "wf-name";
    name.textContent = label;
    const track = document.createElement("span");
    track.className = "wf-track";
    const bar = document.createElement("span");
    bar.className = `wf-bar wf-${key}`;
    bar.style.marginLeft = `${(100 * before) / total}%`;
    bar.style.width = `${Math.max(0.5, (100 * (stages[key] - before)) / total)}%`;
    track.append(bar);
    const ms = document.createElement("span");
    ms.className = "wf-ms";
    ms.textContent = `${Math.round(stages[key] - before)} ms`;
    row.append(name, track, ms);
    box.append(row);
    before = stages[key];
  }
  const sum = document.createElement("p");
  sum.className = "wf-total";
  sum.textContent = client !== null
    ? `Voice-to-action: ${Math.round(client)} ms on this browser's clock (server: ${Math.round(stages.result)} ms)`
    : `Voice-to-action on the server: ${Math.round(stages.result)} ms`;
  box.append(sum);
}

// ---- day view ---------------------------------------------------------------------------------------------
const DAY_START = 7;
const DAY_END = 21;

async function loadDay(iso) {
  const date = iso ? iso.slice(0, 10) : (NOW ? NOW.slice(0, 10) : "");
  const query = new URLSearchParams({ tz: TIMEZONE });
  if (date) query.set("date", date);
  try {
    const response = await fetch(`/api/day?${query}`, TOKEN ? { headers: { Authorization: `Bearer ${TOKEN}` } } : {});
    if (!response.ok) {
      const body = await response.json().catch(() => ({})); // a store that is down says so (store_unavailable)
      throw new Error(body.message || `HTTP ${response.status}`);
    }
    renderDay(await response.json());
  } catch (error) {
    $("day").textContent = `The bookings could not be loaded (${error.message}).`;
  }
}

function hours(iso) {
  return Number(iso.slice(11, 13)) + Number(iso.slice(14, 16)) / 60;
}

function renderDay(data) {
  $("day-date").textContent = day(`${data.date}T00:00`);
  const box = $("day");
  box.textContent = "";
  const scale = document.createElement("div");
  scale.className = "day-row day-scale";
  scale.append(document.createElement("span"));
  const ticks = document.createElement("span");
  ticks.className = "day-track";
  for (let h = DAY_START; h < DAY_END; h += 2) {
    const tick = document.createElement("span");
    tick.className = "day-tick";
    tick.style.left = `${(100 * (h - DAY_START)) / (DAY_END - DAY_START)}%`;
    tick.textContent = `${String(h).padStart(2, "0")}:00`;
    ticks.append(tick);
  }
  scale.append(ticks);
  box.append(scale);
  for (const room of data.rooms) {
    const row = document.createElement("div");
    row.className = "day-row";
    row.dataset.room = room.key;
    const name = document.createElement("span");
    name.className = "day-room";
    name.textContent = `${room.name} (${room.seats})`;
    const track = document.createElement("span");
    track.className = "day-track";
    for (const b of data.bookings.filter((x) => x.room === room.key)) {
      const from = Math.max(DAY_START, b.start.slice(0, 10) < data.date ? 0 : hours(b.start));
      const to = Math.min(DAY_END, b.end.slice(0, 10) > data.date ? 24 : hours(b.end));
      if (to <= DAY_START || from >= DAY_END) continue;
      const block = document.createElement("span");
      block.className = "day-booking";
      block.style.left = `${(100 * (from - DAY_START)) / (DAY_END - DAY_START)}%`;
      block.style.width = `${(100 * (to - from)) / (DAY_END - DAY_START)}%`;
      block.textContent = `${clock(b.start)}–${clock(b.end)}${b.title ? " " + b.title : ""}`;
      block.title = block.textContent;
      track.append(block);
    }
    row.append(name, track);
    box.append(row);
  }
}

// ---- the button ---------------------------------------------------------------------------------------------
async function toggle() {
  const button = $("talk");
  if (state.listening) {
    state.listening = false;
    button.textContent = "Start talking";
    button.setAttribute("aria-pressed", "false");
    stopMicrophone();
    state.player.stop(false);
    const socket = state.socket;
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "stop" }));
    clearTimeout(state.retryTimer);
    return;
  }
  showError("");
  button.disabled = true;
  try {
    await startMicrophone();
  } catch (error) {
    showError(micErrorText(error));
    button.disabled = false;
    return;
  }
  state.listening = true;
  state.retryMs = 1000;
  button.disabled = false;
  button.textContent = "Stop";
  button.setAttribute("aria-pressed", "true");
  connect();
}

$("talk").addEventListener("click", toggle);
if (LANGUAGES.includes(params.get("lang"))) $("language").value = params.get("lang");
if (params.get("speech") === "0") $("speak").checked = false; // ?speech=0: replies shown only
$("speak").addEventListener("change", () => {
  // a session is spoken to or not from its start: while listening, start a new one
  if (!$("speak").checked) state.player.stop(false);
  if (!state.socket || !state.listening) return;
  const old = state.socket;
  connect();
  old.close(1000, "speech changed");
});
$("language").addEventListener("change", () => {
  // a session hears one language: while listening, start a new one that hears the chosen language
  if (!state.socket || !state.listening) return;
  const old = state.socket;
  connect(); // the old socket's close is then no loss of connection (it is no longer state.socket)
  old.close(1000, "language changed");
});
loadDay(null);
