// The media-speech worker's steps, built as workers/queues.ts builds them, for activity-level speech tests.
import { createRecognitionActivities } from '../../activities/speech/recognition';
import { createFfmpegEngine } from '../../engines/ffmpeg/ffmpeg.engine';
import { createSpeechServices } from '../../engines/speech/services';
import { createConfiguredWhisperEngine } from '../../engines/speech/whisper.engine';
import type { LocalStorage } from '../../engines/storage';
import type { Config } from '../../lib/config';
import { transcribeSteps } from '../../operations/transcribe/activities';
import { translateSteps } from '../../operations/translate/activities';

export function speechSteps(config: Config, storage: LocalStorage) {
  const services = createSpeechServices(config);
  const speech = { whisper: createConfiguredWhisperEngine(config, 1), ...services };
  const ffmpeg = createFfmpegEngine(config);
  const activities = {
    ...createRecognitionActivities({ ...speech, ffmpeg, storage, config }),
    ...transcribeSteps({ config, storage, ffmpeg, speech }),
    ...translateSteps({ config, storage, ffmpeg, speech }),
  };
  return { speech, services, activities };
}
