// The main page's checks that need more than onnxruntime-web and the helper: the microphone and WebGPU.
import { framesOf, maxDiff, sileroAuthors, sileroStream, wavSamples } from './checks.mjs';

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** The longest run of frames whose probability is at most 0.5. */
function longestSilence(outputs) {
  let longest = 0;
  let run = 0;
  for (const p of outputs) {
    run = p > 0.5 ? 0 : run + 1;
    longest = Math.max(longest, run);
  }
  return longest;
}

/**
 * Chromium plays speech.wav as the microphone (once through: its length, then a little more); the demo's
 * worklet cuts it into 512-sample frames, which go to the helper. The helper's probabilities must equal
 * the authors' protocol on the same captured frames, mark speech, and leave a second of silence silent.
 */
export async function microphone(ort, StreamingSession, expected) {
  const media = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext({ sampleRate: 16000 });
  await context.audioWorklet.addModule('/demo/frames.worklet.js');
  const tap = new AudioWorkletNode(context, 'frames', { processorOptions: { frame: 512 } });
  const frames = [];
  tap.port.onmessage = ({ data }) => frames.push(data);
  context.createMediaStreamSource(media).connect(tap);
  await sleep(expected.silero.outputs.length * 32 + 300);
  tap.port.onmessage = null;
  media.getTracks().forEach((track) => track.stop());
  context.close();
  const outputs = await sileroStream(ort, StreamingSession, '/site/silero.js.onnx', frames);
  const authors = await sileroAuthors(ort, frames);
  const diff = maxDiff(outputs, authors);
  const speech = outputs.filter((p) => p > 0.5).length;
  const silence = longestSilence(outputs);
  const ok = frames.length >= 200 && diff <= 1e-5 && speech >= expected.silero.speech / 2 && silence >= 25;
  return { ok, detail: `${frames.length} frames captured, speech in ${speech} (the file: ${expected.silero.speech}), ` +
    `longest silence ${silence} frames, helper vs authors' protocol on the captured frames ${diff.toExponential(2)}` };
}

/**
 * Silero on WebGPU with its state outputs kept on the GPU: each call's probabilities close to wasm's
 * (onnxruntime-node's), and every state the helper replaced disposed (its location "none").
 */
export async function webgpu(ort, StreamingSession, expected) {
  const frames = framesOf(await wavSamples('/site/speech.wav')).slice(0, 10);
  const sessionOptions = { executionProviders: ['webgpu'],
    preferredOutputLocation: { stateN: 'gpu-buffer', 'input.context_out': 'gpu-buffer' } };
  const stream = await StreamingSession.create('/site/silero.js.onnx', { ort, batch: 1, sessionOptions });
  const replaced = [];
  const outputs = [];
  for (const frame of frames) {
    const before = Object.values(stream.state ?? {});
    outputs.push(...(await sileroStream(ort, StreamingSession, null, [frame], { stream })));
    replaced.push(...before);
  }
  const onGpu = Object.values(stream.state).every((t) => t.location === 'gpu-buffer');
  const leaked = replaced.filter((t) => t.location !== 'none' && t.location !== 'cpu').length;
  await stream.release();
  const diff = maxDiff(outputs, expected.silero.outputs.slice(0, frames.length));
  return { ok: onGpu && leaked === 0 && diff <= 1e-3, detail: `${frames.length} calls, states on the GPU ${onGpu}, ` +
    `replaced states not disposed ${leaked}, vs wasm ${diff.toExponential(2)}` };
}
