// The floor's worker, on serve's dev server: the floor workflows and their no-op activity on a queue of
// their own, each started and awaited by the bench's client, one after another.
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { emptyWorkflow, FLOOR_QUEUE, floorWorkflow } from './floor-workflow';
import { median, type BenchContext } from './harness';

export interface FloorWorker {
  /** Median of `runs` workflows (by default the one with a no-op activity), each started and awaited one after another, in seconds. */
  measure(ctx: BenchContext, runs: number, workflow?: typeof floorWorkflow | typeof emptyWorkflow): Promise<number>;
  stop(): Promise<void>;
}

let runtimeInstalled = false;

export async function startFloorWorker(ctx: BenchContext): Promise<FloorWorker> {
  // the bench's table is its output: the worker's bundling and state lines only at WARN (a process installs its runtime once)
  if (!runtimeInstalled) Runtime.install({ logger: new DefaultLogger('WARN') });
  runtimeInstalled = true;
  const connection = await NativeConnection.connect({ address: `127.0.0.1:${ctx.stack.env.TEMPORAL_DEV_PORT}` });
  const worker = await Worker.create({ connection, taskQueue: FLOOR_QUEUE, workflowsPath: require.resolve('./floor-workflow'), activities: { noop: async () => undefined } });
  const running = worker.run();
  let n = 0;
  return {
    async measure(c, runs, workflow = floorWorkflow) {
      const seconds: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        await c.temporal.workflow.execute(workflow, { taskQueue: FLOOR_QUEUE, workflowId: `bench-floor-${process.pid}-${n++}` });
        seconds.push((performance.now() - t0) / 1000);
      }
      return median(seconds);
    },
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
