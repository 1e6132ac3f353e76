// Transcribe's own steps (media-speech queue): the transcript file and result_data from the shared
// recognition (activities/speech/recognition.ts).
import { createRecognitionActivities, joinText, readRecognition, recognisedSegments, speechResultFields, writeSpeechFiles, type Recognition, type SpeechInput } from '../../activities/speech/recognition';
import type { JobOutput } from '../../lib/job-reports';
import { speechOf, type StepDeps } from '../step-deps';
import type { TranscribeParams } from './spec';

export function transcribeSteps(deps: StepDeps) {
  const { storage } = deps;
  const recognition = createRecognitionActivities({ ...speechOf(deps), ffmpeg: deps.ffmpeg, storage, config: deps.config });

  const steps = {
    /** The transcript file (JSON with words, SRT or VTT) and result_data, from the recognition. */
    async writeTranscript(input: { jobId: string; params: TranscribeParams; recognition: Recognition }): Promise<JobOutput> {
      const started = performance.now();
      const p = input.params;
      const result = await readRecognition(storage, input.jobId, input.recognition);
      const words = p.word_timestamps && p.output_format === 'json';
      const { segments, speakers } = recognisedSegments(result, p);
      const text = joinText(segments.map((s) => s.text));
      const json = {
        text,
        language: result.language,
        ...(speakers ? { speakers } : {}),
        segments: segments.map((s) => ({ start: s.start, end: s.end, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}), ...(s.channel !== undefined ? { channel: s.channel } : {}), ...(words ? { words: s.words ?? [] } : {}) })),
      };
      const outputFile = await writeSpeechFiles(storage, input.jobId, { format: p.output_format, json, cues: segments, segments });
      return {
        outputFile,
        resultData: { language: result.language, text, ...speechResultFields(result, input.recognition, segments.length, p.output_format, started), ...(speakers ? { speaker_count: speakers.length } : {}) },
      };
    },
  };

  return {
    ...steps,

    /** Speech → text in one step; workflows started before speech-steps-v1 still call it. */
    async transcribe(input: SpeechInput<TranscribeParams>): Promise<JobOutput> {
      const done = await recognition.recognizeSpeech({ jobId: input.jobId, sourceFile: input.sourceFile, request: { kind: 'transcribe', params: input.params }, progressRange: input.progressRange });
      return steps.writeTranscript({ jobId: input.jobId, params: input.params, recognition: done });
    },
  };
}
