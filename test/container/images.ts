// The images both container suites need, built once per run by scripts/container/build-images.sh:
// builds that share no work run at the same time, overlapping one another's downloads with
// compiling. make test-container starts that script before its host install; the suites wait for it.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectRoot } from '../../lib/config';
import { runLogged } from './podman';

export const IMAGE = 'localhost/mediasvc:latest';
export const TEMPORAL_IMAGE = 'localhost/mediasvc-temporal:1.32.2';
const LOGS = path.join(projectRoot, '.test-tmp/container');
/** Where make test-container leaves the pid of the builds it started in the background. */
const BACKGROUND_PID = path.join(LOGS, 'build-images.pid');
const TIMES = path.join(LOGS, 'build-times.json');

/** Seconds each build took, by image (a stand-in already there is not built again), and "all". */
export type BuildTimes = Record<string, number>;

let built: Promise<BuildTimes> | null = null;

/** The images' build times: from the builds make test-container started, else from builds run now. */
export function buildAllImages(): Promise<BuildTimes> {
  built ??= (async () => {
    const background = fs.existsSync(BACKGROUND_PID) ? Number(fs.readFileSync(BACKGROUND_PID, 'utf8').trim()) : 0;
    if (background > 0) {
      while (alive(background)) await sleep(2000);
      fs.rmSync(BACKGROUND_PID, { force: true });
    }
    if (!(background > 0 && fs.existsSync(TIMES))) await runLogged('bash', ['scripts/container/build-images.sh'], path.join(LOGS, 'build-images.log')).catch(() => undefined);
    const result = fs.existsSync(TIMES) ? (JSON.parse(fs.readFileSync(TIMES, 'utf8')) as Record<string, unknown>) : { failed: ['(no build-times.json)'] };
    if (Array.isArray(result.failed)) throw new Error(`image builds failed: ${result.failed.join(', ')}; logs in ${LOGS}`);
    return result as BuildTimes;
  })();
  return built;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
