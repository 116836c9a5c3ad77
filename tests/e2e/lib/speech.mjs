// Speech for the voice-activity tests: an English sentence synthesized by espeak-ng and made 16 kHz mono
// 16-bit with one second of silence before and after by sox (Debian packages; tools/setup.sh installs
// them), as the README's quick start makes it. Deterministic: sox without dither (-D), 1 dB below full
// scale so that resampling never clips.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SENTENCE = 'The quick brown fox jumps over the lazy dog. Voice activity detection finds speech in a recording.';
export const RATE = 16000;
/** Silero VAD's frame at 16 kHz, and the samples of the call before its authors prepend. */
export const FRAME = 512;
export const CONTEXT = 64;

function run(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.error) throw new Error(`cannot run ${command} (tools/setup.sh installs espeak-ng and sox): ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
}

/** Writes DIR/speech.wav (and DIR/said.wav, espeak-ng's own); returns the path of speech.wav. */
export function makeSpeechWav(dir) {
  const said = join(dir, 'said.wav');
  const speech = join(dir, 'speech.wav');
  run('espeak-ng', ['-w', said, SENTENCE]);
  run('sox', [said, '-D', '-r', String(RATE), '-c', '1', '-b', '16', speech, 'gain', '-1', 'pad', '1', '1']);
  return speech;
}

/** The first channel of a 16-bit PCM WAV file, in [-1, 1), and its sample rate. */
export function readWav(path) {
  const bytes = readFileSync(path);
  let rate = 0;
  let channels = 1;
  for (let p = 12; p + 8 <= bytes.length; p += 8 + bytes.readUInt32LE(p + 4) + (bytes.readUInt32LE(p + 4) & 1)) {
    const id = bytes.toString('latin1', p, p + 4);
    if (id === 'fmt ') {
      channels = bytes.readUInt16LE(p + 10);
      rate = bytes.readUInt32LE(p + 12);
    } else if (id === 'data') {
      const count = bytes.readUInt32LE(p + 4) / 2 / channels;
      const samples = Float32Array.from({ length: count }, (_, i) => bytes.readInt16LE(p + 8 + 2 * i * channels) / 32768);
      return { rate, samples };
    }
  }
  throw new Error(`${path}: no data chunk`);
}
