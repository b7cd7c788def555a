// Spoken replies on the page: each reply's audio frames (a binary message: the reply's number as a little-endian
// uint32, then 16-bit mono PCM at the reply_audio event's sample_rate; docs/protocol.md) are scheduled on a Web
// Audio context back to back as they arrive, so the first sentence plays while the next is still being made.
// stop() silences at once (barge-in) and says how much was played, for the server's `playback` report.

export class ReplyPlayer {
  constructor(onState, onStarted) {
    this.onStarted = onStarted; // (reply number, seconds from now until its sound begins) => void
    this.context = null; // made on the first reply (after the user's click: browsers allow audio then)
    this.onState = onState; // (speaking: boolean) => void
    this.reply = null; // {number, rate, startedAt, nextTime, sources, ended, sentAll}
    this.stopped = new Set(); // replies stopped here: their late frames are dropped
  }

  begin(event) {
    if (this.stopped.has(event.reply)) return;
    this.stop(false); // a newer reply replaces what is left of an older one
    if (!this.context) this.context = new AudioContext();
    this.context.resume();
    this.reply = { number: event.reply, rate: event.sample_rate, startedAt: null, nextTime: 0, sources: new Set(),
      sentAll: false };
    this.onState(true);
  }

  frame(data) {
    const view = new DataView(data);
    const number = view.getUint32(0, true);
    const reply = this.reply;
    if (!reply || number !== reply.number || data.byteLength <= 4) return;
    const samples = new Int16Array(data.slice(4));
    const buffer = this.context.createBuffer(1, samples.length, reply.rate);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < samples.length; i += 1) channel[i] = samples[i] / 32768;
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const at = Math.max(this.context.currentTime + 0.02, reply.nextTime);
    if (reply.startedAt === null) {
      reply.startedAt = at;
      this.onStarted(reply.number, at - this.context.currentTime);
    }
    reply.nextTime = at + buffer.duration;
    reply.sources.add(source);
    source.onended = () => {
      reply.sources.delete(source);
      if (this.reply === reply && reply.sentAll && reply.sources.size === 0) this.finish();
    };
    source.start(at);
  }

  end(event) {
    const reply = this.reply;
    if (!reply || event.reply !== reply.number) return;
    reply.sentAll = true;
    if (reply.sources.size === 0) this.finish();
  }

  get playing() {
    return this.reply !== null && this.reply.sources.size > 0;
  }

  finish() {
    this.reply = null;
    this.onState(false);
  }

  // Silence now; returns the playback report for the server ({type: "playback", ...}) or null.
  stop(barge = true) {
    const reply = this.reply;
    if (!reply) return null;
    this.reply = null;
    for (const source of reply.sources) {
      source.onended = null;
      source.stop();
    }
    this.onState(false);
    if (!barge) return null;
    this.stopped.add(reply.number);
    const played = reply.startedAt === null ? 0 : Math.max(0, this.context.currentTime - reply.startedAt);
    return { type: "playback", reply: reply.number, state: "stopped", played_ms: Math.round(played * 1000) };
  }
}
