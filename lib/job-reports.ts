// What a job's steps report back across the workflow boundary: their progress while they run, the
// source they found, the output they end with. Pure types, below every layer: the steps
// (activities/, operations/), the workflows and the job domain all read them, and importing them
// from the job domain (jobs/types.ts, which knows the operation registry) tied those layers in a circle.

/** What an operation hands back for the job row. */
export interface JobOutput {
  /** Output path relative to the files directory. */
  outputFile: string;
  resultData: Record<string, unknown>;
  /** Further files of the job, after outputFile: paths relative to the files directory, in the job's own folder. */
  moreFiles?: string[];
  /** Credits charged for work the job turned out not to need (charged at most at creation): refunded as it completes. */
  creditsUnused?: number;
}

/** What a step learnt of a job's source: its title and length (seconds; null when unknown). */
export interface SourceSummary {
  title: string;
  duration: number | null;
}

/** Heartbeat details of long activities: overall job progress, 0..100. */
export interface ProgressDetails {
  progress: number;
  /** Speech recognition so far: how many segments, and the texts of the latest (live transcription streams). */
  recognised?: { count: number; recent: string[] };
}
