// The operation registry: every asynchronous operation, declared once (see spec.ts).
import type { z } from 'zod';
import type { JobType } from '../jobs';
import { comments } from './comments';
import { download } from './download';
import { fingerprint } from './fingerprint';
import { preview } from './preview';
import type { OperationSpec } from './spec';
import { transcribe } from './transcribe';
import { translate } from './translate';

export const OPERATIONS = { download, preview, transcribe, translate, fingerprint, comments } as const satisfies {
  [T in JobType]: OperationSpec<T, z.ZodType>;
};

type Operations = typeof OPERATIONS;
/** Normalised parameters of a job type (what `parameters` echoes and the workflow receives). */
export type JobParams<T extends JobType> = z.output<Operations[T]['request']>;
export type AnyOperation = Operations[JobType];

export type { OperationSpec, ServerCapabilities, OutputKind } from './spec';
export type { DownloadParams, DownloadFormat, Quality } from './download';
export type { PreviewParams, PreviewType } from './preview';
export type { FingerprintParams, HashSize } from './fingerprint';
export type { CommentsParams } from './comments';
export type { TranscribeParams, ModelSize, SpeechOutputFormat } from './transcribe';
export type { TranslateParams } from './translate';
