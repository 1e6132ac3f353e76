// The scheduled yt-dlp update (YTDLP_AUTO_UPDATE=daily), on the media-fetch queue: run where yt-dlp runs.
import type { Config } from '../../lib/config';
import { log } from '../../lib/logger';
import { updateYtdlp, type UpdateOutcome } from '../../engines/ytdlp/versions';
import { keepAlive } from '../step/heartbeat';

export function createToolUpdateActivities(config: Config) {
  return {
    /** Installs PyPI's newest yt-dlp, checks it and switches to it; one failing its self-check is never used, and the log says why. */
    async updateYtdlp(): Promise<UpdateOutcome> {
      const stop = keepAlive();
      try {
        const out = await updateYtdlp(config, undefined, (line) => log.info({ tool: 'yt-dlp' }, line));
        if (out.rolledBack) log.warn({ tool: 'yt-dlp', version: out.to, kept: out.rolledBack.kept, reason: out.rolledBack.reason }, `yt-dlp ${out.to} failed its self-check: still using ${out.rolledBack.kept}`);
        else if (out.from !== out.to) log.info({ tool: 'yt-dlp', from: out.from, to: out.to }, `yt-dlp updated from ${out.from} to ${out.to}`);
        return out;
      } finally {
        stop();
      }
    },
  };
}
