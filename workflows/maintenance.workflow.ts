// Housekeeping workflows, each started by a Temporal Schedule (workers/schedules.ts).
import { control, toolUpdate } from './activity-proxies';

/** Starts the workflows of jobs left pending (the transactional outbox's reconciler). */
export async function reconcileJobsWorkflow(input: { olderThanSeconds: number }): Promise<{ checked: number; started: number }> {
  return control.startStrandedJobs(input);
}

/** Removes expired outputs and old rate-limit and idempotency records. */
export async function sweepStorageWorkflow(): Promise<{ filesRemoved: number }> {
  return control.sweepExpiredOutputs();
}

/** The monthly credit top-up of every account (1st of the month, 00:00 UTC). */
export async function grantMonthlyCreditsWorkflow(): Promise<{ granted: number }> {
  return control.grantMonthlyCredits();
}

/** YTDLP_AUTO_UPDATE=daily: PyPI's newest yt-dlp, used only if it passes its self-check. */
export async function updateYtdlpWorkflow(): Promise<{ from: string; to: string; rolledBack?: { kept: string; reason: string } }> {
  return toolUpdate.updateYtdlp();
}
