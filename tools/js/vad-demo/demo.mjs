// Microphone -> AudioWorklet (frames.worklet.js: 512-sample frames at 16 kHz) -> StreamingSession.run()
// -> a plot of the last 10 s of speech probability (red above 0.5).
import * as ort from 'onnxruntime-web';
import { StreamingSession } from 'rnnstate-stream';

const status = document.getElementById('status');
const canvas = document.getElementById('plot');
const history = [];  // the last probabilities, one per 32 ms frame
const shown = 312;   // 10 s

function draw() {
  const g = canvas.getContext('2d');
  const { width, height } = canvas;
  g.clearRect(0, 0, width, height);
  g.strokeStyle = '#bbb';
  g.beginPath();
  g.moveTo(0, height / 2);
  g.lineTo(width, height / 2);  // 0.5
  g.stroke();
  const step = width / shown;
  history.forEach((p, i) => {
    g.fillStyle = p > 0.5 ? '#d33' : '#79c';
    g.fillRect(i * step, height * (1 - p), Math.max(1, step - 1), height * p);
  });
}

async function start() {
  document.getElementById('start').disabled = true;
  status.textContent = 'loading the model...';
  const stream = await StreamingSession.create(new URL('silero.js.onnx', import.meta.url), { ort, batch: 1 });
  const media = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext({ sampleRate: 16000 });  // the browser resamples the microphone
  await context.audioWorklet.addModule(new URL('frames.worklet.js', import.meta.url));
  const frames = new AudioWorkletNode(context, 'frames', { processorOptions: { frame: 512 } });
  frames.port.onmessage = async ({ data }) => {
    // A new tensor for every input, every call: onnxruntime-web's proxy mode takes the buffers it is fed.
    const input = new ort.Tensor('float32', data, [1, 512]);
    const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
    const { output } = await stream.run({ input, sr });  // calls take effect in order, even unawaited
    history.push(output.data[0]);
    if (history.length > shown) history.shift();
    requestAnimationFrame(draw);
  };
  context.createMediaStreamSource(media).connect(frames);
  status.textContent = 'listening: speak';
}

document.getElementById('start').addEventListener('click', () => start().catch((err) => {
  status.textContent = `error: ${err.message}`;
}));
