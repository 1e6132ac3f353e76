// The memory floor's Node process: a bare Temporal worker, with the settings of the product's own
// processes (its workflow cache size, one malloc arena, the heap trim), running floor-workflow.ts's
// workflows from a bundle built by the parent, and the no-op activity.
//   bare-worker.js ADDRESS BUNDLE_FILE CACHE_SIZE
// Talks to its parent over IPC: sends { ready: true } once polling, and answers 'count' with
// { noops }: how many no-op activities have run. Stops on SIGTERM.
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { startHeapTrim } from '../../../lib/heap-trim';
import { FLOOR_QUEUE } from '../floor-workflow';

async function main(): Promise<void> {
  const [address, bundleFile, cacheSize] = process.argv.slice(2);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const trim = startHeapTrim(10_000);
  const connection = await NativeConnection.connect({ address: address! });
  let noops = 0;
  const worker = await Worker.create({
    connection,
    taskQueue: FLOOR_QUEUE,
    workflowBundle: { codePath: bundleFile! },
    maxCachedWorkflows: Number(cacheSize),
    activities: {
      noop: async () => {
        noops++;
      },
    },
  });
  process.on('message', (m) => {
    if (m === 'count') process.send!({ noops });
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  process.send!({ ready: true });
  await running;
  trim.stop();
  await connection.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
