// A WAV header for 16-bit PCM: a valid file of any size (conversations, streamed uploads).
export function wavHeader(dataBytes: number, opts: { channels?: number; rate?: number } = {}): Buffer {
  const channels = opts.channels ?? 1;
  const rate = opts.rate ?? 16_000;
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2 * channels, 28);
  h.writeUInt16LE(2 * channels, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(dataBytes, 40);
  return h;
}
