import path from 'node:path';
import type { Config } from '../../lib/config';
import { createApertiumEngine } from '../translate/apertium.engine';
import type { TranslationEngine } from '../translate/translation-engine';
import { ModelRegistry } from './model-registry';
import type { WhisperEngine } from './whisper.engine';

export interface SpeechServices {
  registry: ModelRegistry;
  translator: TranslationEngine;
}

/** The speech engines a media-speech worker holds: faster-whisper, its models, the text translator. */
export interface SpeechEngines extends SpeechServices {
  whisper: WhisperEngine;
}

type SpeechConfig = Pick<Config, 'whisperPython' | 'whisperModelDirs' | 'whisperAutoDownload' | 'apertiumPath' | 'apertiumModesDir'>;

/** The model registry and the text translation engine, from the settings. */
export function createSpeechServices(config: SpeechConfig): SpeechServices {
  return {
    // .venv/bin/python → .venv (not resolved: the venv's python is a link to the system one)
    registry: new ModelRegistry({ venvDir: path.dirname(path.dirname(config.whisperPython)), extraDirs: config.whisperModelDirs, autoDownload: config.whisperAutoDownload }),
    translator: createApertiumEngine({ binary: config.apertiumPath, modesDir: config.apertiumModesDir }),
  };
}
