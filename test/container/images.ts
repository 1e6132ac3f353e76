// The images both container suites need, built once per run and at the same time: the builds
// overlap one another's downloads with compiling, which on two cores saves minutes of a cold run.
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
    const builds: [string, string][] = [[IMAGE, 'Dockerfile'], [TEMPORAL_IMAGE, 'container/temporal/Dockerfile']];
    for (const [image, dockerfile] of STAND_INS) if ((await podman('images', '-q', image)) === '') builds.push([image, dockerfile]);
    const started = Date.now();
    const times = await Promise.all(builds.map(([image, dockerfile]) => buildImage(image, path.join(LOGS, `build-${image.replace(/[^a-z0-9.]+/gi, '_')}.log`), dockerfile)));
    const out: BuildTimes = Object.fromEntries(builds.map(([image], i) => [image, Math.round(times[i]!)]));
    out.all = Math.round((Date.now() - started) / 1000);
    return out;
  })();
  return built;
}
