// The images both container suites need, built once per run; builds that share no work run at the
// same time, overlapping one another's downloads with compiling.
import path from 'node:path';
import { projectRoot } from '../../lib/config';
import { buildImage, podman } from './podman';

export const IMAGE = 'localhost/mediasvc:latest';
export const TEMPORAL_IMAGE = 'localhost/mediasvc-temporal:1.32.2';
/** The registry images compose.scale-out.yaml names, and where to build a stand-in when one is missing. */
export const STAND_INS: [string, string][] = [
  ['docker.io/library/postgres:15', 'test/container/images/postgres/Dockerfile'],
  ['docker.io/chrislusf/seaweedfs:4.53', 'test/container/images/seaweedfs/Dockerfile'],
];
const LOGS = path.join(projectRoot, '.test-tmp/container');

/** Seconds each build took, by image (a stand-in already there is not built again). */
export type BuildTimes = Record<string, number>;

let built: Promise<BuildTimes> | null = null;

/** Builds the service's image, the Temporal server's and any missing stand-in, all at once. */
export function buildAllImages(): Promise<BuildTimes> {
  built ??= (async () => {
    const stamp = (image: string) => path.join(LOGS, `build-${image.replace(/[^a-z0-9.]+/gi, '_')}.log`);
    const started = Date.now();
    const times: BuildTimes = {};
    const build = async (image: string, dockerfile: string) => {
      times[image] = Math.round(await buildImage(image, stamp(image), dockerfile));
    };
    const standIns: Promise<void>[] = [];
    for (const [image, dockerfile] of STAND_INS) if ((await podman('images', '-q', image)) === '') standIns.push(build(image, dockerfile));
    await Promise.all([build(IMAGE, 'Dockerfile'), build(TEMPORAL_IMAGE, 'container/temporal/Dockerfile'), ...standIns]);
    times.all = Math.round((Date.now() - started) / 1000);
    return times;
  })();
  return built;
}
