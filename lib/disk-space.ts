// Free space under DATA_DIR, where outputs, uploads, work files and (embedded) both SQLite databases
// live: read by /readyz and /metrics, and by the workers before a step that writes there starts.
import fs from 'node:fs';

export interface DiskSpace {
  freeBytes: number;
  totalBytes: number;
  /** Free space is below MIN_FREE_DISK_MB: new steps wait. */
  low: boolean;
}

/** Free space as an unprivileged process sees it (blocks available, not reserved for root). */
export function diskSpace(dir: string, minFreeBytes: number): DiskSpace | null {
  try {
    const s = fs.statfsSync(dir);
    const freeBytes = s.bavail * s.bsize;
    return { freeBytes, totalBytes: s.blocks * s.bsize, low: freeBytes < minFreeBytes };
  } catch {
    return null;
  }
}

/** /readyz's word on the disk: "ok", or what is wrong and what the service does about it. */
export function diskReadiness(dir: string, minFreeMb: number): string {
  const space = diskSpace(dir, minFreeMb * 2 ** 20);
  if (!space) return 'DATA_DIR cannot be read';
  if (!space.low) return 'ok';
  return `low: ${Math.floor(space.freeBytes / 2 ** 20)} MB free under DATA_DIR, below MIN_FREE_DISK_MB=${minFreeMb}; new steps wait until space is freed`;
}
