// The product's egress proxy alone, in a process of its own as in a media worker: the media rows
// run each bare command through it too, so the relay's share of a job's time shows on its own.
//   egress-proxy.js
// Prints `proxy <url> listening <port>` once it accepts connections; stops on SIGTERM.
import { startEgressProxy } from '../../../engines/egress/egress-proxy';

async function main(): Promise<void> {
  // the bench's origin is on loopback, as ALLOW_PRIVATE_NETWORK lets serve's workers reach it
  const proxy = await startEgressProxy({ allowPrivate: true });
  const url = proxy.urlFor('bench');
  console.log(`proxy ${url} listening ${new URL(url).port}`);
  // the proxy's server is unref'd: this keeps the process up until the bench stops it
  const alive = setInterval(() => undefined, 60_000);
  process.once('SIGTERM', () => {
    clearInterval(alive);
    void proxy.close().then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
