// The workflow bundle: built once by `make build` (webpack) into dist/, so running workers load it
// instead of running webpack at start (about 75 MB of RSS at start, ~30 MB settled, and 1.3 s).
// A bundle whose inputs changed since it was built is not used: the worker bundles at start instead.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type BundleOptions, type WorkflowBundleOption } from '@temporalio/worker';
import webpack from 'webpack';
import { log } from '../lib/logger';

const workflowsPath = require.resolve('../workflows');
const distRoot = path.resolve(__dirname, '..');
const CODE_FILE = path.join(distRoot, 'workflow-bundle.js');
const STAMP_FILE = path.join(distRoot, 'workflow-bundle.json');

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => log.warn({ component: 'bundler' }, m),
  error: (m: string) => log.error({ component: 'bundler' }, m),
};

const operationsDir = path.join(distRoot, 'operations');
const EMPTY_MODULE = require.resolve('./empty-module');

/**
 * Only runners run in the sandbox: an operation folder's spec, activities and view (schemas, tools,
 * pages) are bundled as an empty module, so an operation's index.ts can list all four.
 */
const bundleOptions: BundleOptions = {
  workflowsPath,
  logger: quietBundlerLogger,
  webpackConfigHook: (config) => ({
    ...config,
    plugins: [
      ...(config.plugins ?? []),
      new webpack.NormalModuleReplacementPlugin(/^\.\/(spec|activities|view)$/, (resource: { context: string; request: string }) => {
        if (path.dirname(resource.context) === operationsDir) resource.request = EMPTY_MODULE;
      }),
    ],
  }),
};

/** A digest of everything webpack reads: the compiled workflows, the modules they load, and the workflow SDK's version. */
function inputsDigest(): string {
  const hash = crypto.createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.js')) hash.update(path.relative(distRoot, full)).update('\0').update(fs.readFileSync(full)).update('\0');
    }
  };
  for (const dir of ['workflows', 'lib', 'operations', 'jobs', 'webhooks']) walk(path.join(distRoot, dir));
  hash.update((require('@temporalio/workflow/package.json') as { version: string }).version);
  return hash.digest('hex');
}

/** Bundles the workflows and writes the bundle with the digest of its inputs; what `make build` runs. */
export async function writeWorkflowBundle(): Promise<{ file: string; bytes: number }> {
  const { code } = await bundleWorkflowCode(bundleOptions);
  const written = withEmptySourceMap(code);
  fs.writeFileSync(CODE_FILE, written);
  fs.writeFileSync(STAMP_FILE, JSON.stringify({ inputs: inputsDigest() }));
  return { file: CODE_FILE, bytes: Buffer.byteLength(written) };
}

/**
 * The bundle's inline source map (1.2 MB) is parsed in every workflow thread: ~6 MB of heap each.
 * The bundle is readable webpack output naming each module, so a workflow stack's
 * workflow-bundle.js:LINE is looked up in it directly. The SDK needs some map: an empty one.
 */
function withEmptySourceMap(code: string): string {
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const empty = Buffer.from(JSON.stringify({ version: 3, sources: [], names: [], mappings: '' })).toString('base64');
  return `${at > 0 ? code.slice(0, at) : code}//# sourceMappingURL=data:application/json;base64,${empty}\n`;
}

/** The prebuilt bundle when it matches the compiled workflows, else null. */
function prebuilt(): WorkflowBundleOption | null {
  try {
    const stamp = JSON.parse(fs.readFileSync(STAMP_FILE, 'utf8')) as { inputs?: string };
    if (stamp.inputs === inputsDigest() && fs.existsSync(CODE_FILE)) return { codePath: CODE_FILE };
    log.warn({ component: 'bundler' }, 'the prebuilt workflow bundle is older than the compiled workflows: bundling at start (run make build)');
  } catch {
    // not built by make build (e.g. tsc alone): bundle at start
  }
  return null;
}

let bundle: Promise<WorkflowBundleOption> | null = null;

/** The workflow bundle of this process: the prebuilt one when current, else built once at start. */
export function workflowBundle(): Promise<WorkflowBundleOption> {
  bundle ??= Promise.resolve(prebuilt()).then((b) => b ?? bundleWorkflowCode(bundleOptions));
  return bundle;
}
