// Runs on the audio thread: mixes the microphone to mono, downsamples from the context's rate (44.1 or 48 kHz)
// to 16 kHz, and posts 20 ms frames of 16-bit PCM (320 samples) plus the frame's peak level to the page.
// Downsampling averages the input samples that fall into each output sample (a box filter): cheap, and enough
// anti-aliasing for speech recognition, which ignores everything above 8 kHz anyway.

const TARGET_RATE = 16000;
const FRAME = 320; // 20 ms at 16 kHz

class CaptureProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / TARGET_RATE; // input samples per output sample, e.g. 3 at 48 kHz
    this.position = 0; // fractional input position of the next output sample, relative to this block
    this.acc = 0;
    this.count = 0;
    this.frame = new Int16Array(FRAME);
    this.filled = 0;
    this.peak = 0;
  }

  process(inputs) {
    const input = inputs[0];
    if (!input || input.length === 0) return true;
    const channels = input.length;
    const length = input[0].length;
    for (let i = 0; i < length; i++) {
      let sample = 0;
      for (let c = 0; c < channels; c++) sample += input[c][i];
      sample /= channels;
      this.acc += sample;
      this.count += 1;
      if (i + 1 >= this.position + this.step) {
        this.emit(this.acc / this.count);
        this.acc = 0;
        this.count = 0;
        this.position += this.step;
      }
    }
    this.position -= length;
    return true;
  }

  emit(value) {
    const clipped = Math.max(-1, Math.min(1, value));
    this.peak = Math.max(this.peak, Math.abs(clipped));
    this.frame[this.filled++] = clipped < 0 ? clipped * 0x8000 : clipped * 0x7fff;
    if (this.filled === FRAME) {
      this.port.postMessage({ pcm: this.frame.buffer, peak: this.peak }, [this.frame.buffer]);
      this.frame = new Int16Array(FRAME);
      this.filled = 0;
      this.peak = 0;
    }
  }
}

registerProcessor("capture-16k", CaptureProcessor);
