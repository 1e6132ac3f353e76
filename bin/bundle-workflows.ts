// `make build` runs this after tsc: the workflow bundle that workers load instead of running webpack at start.
import { writeWorkflowBundle } from '../workers/workflow-bundle';

writeWorkflowBundle().then(
  ({ file, bytes }) => console.log(`workflow bundle: ${file} (${(bytes / 2 ** 20).toFixed(2)} MB)`),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
