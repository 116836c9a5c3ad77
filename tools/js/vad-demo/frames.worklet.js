// An AudioWorklet processor that cuts the microphone into frames of `frame` samples (default 512: Silero
// VAD's 32 ms at 16 kHz) and posts each one to the page. The AudioContext's sample rate is the model's
// (new AudioContext({sampleRate: 16000})): the browser resamples the microphone to it.
class Frames extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.size = options.processorOptions?.frame ?? 512;
    this.frame = new Float32Array(this.size);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0]?.[0];  // the first channel; none while the source is silent or gone
    if (!channel) return true;
    let read = 0;
    while (read < channel.length) {
      const n = Math.min(channel.length - read, this.frame.length - this.filled);
      this.frame.set(channel.subarray(read, read + n), this.filled);
      this.filled += n;
      read += n;
      if (this.filled === this.frame.length) {
        this.port.postMessage(this.frame, [this.frame.buffer]);  // transferred: a new frame follows
        this.frame = new Float32Array(this.size);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor('frames', Frames);
