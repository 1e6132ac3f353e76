import { z } from 'zod';
import { oneSource, sourceFields, sourceRequired, TimeString, WebhookUrl } from '../fields';
import type { OperationSpec } from '../define';

export const HASH_SIZES = [8, 16, 32] as const;
export type HashSize = (typeof HASH_SIZES)[number];

export const FingerprintRequestSchema = z
  .strictObject({
    ...sourceFields,
    timestamp: TimeString.nullable().default(null).meta({ description: 'Frame to hash; default 25% of the duration' }),
    hash_size: z
      .union([z.literal(8), z.literal(16), z.literal(32)], { error: 'must be 8, 16 or 32' })
      .default(16)
      .meta({ description: 'Bits per side: each hash has hash_size² bits', type: 'integer', enum: [...HASH_SIZES] }),
    webhook_url: WebhookUrl,
  })
  .refine(...sourceRequired)
  .refine(...oneSource)
  .meta({ id: 'FingerprintRequest' });

export type FingerprintParams = z.output<typeof FingerprintRequestSchema>;

const hex = (what: string) => z.string().regex(/^[0-9a-f]+$/).meta({ description: `${what}: hex of hash_size² bits, imagehash's layout` });
export const FingerprintResultSchema = z
  .looseObject({
    average_hash: hex('mean-brightness hash'),
    perceptual_hash: hex('DCT hash; the recommended primary signal'),
    difference_hash: hex('gradient hash'),
    hash_size: z.number().int(),
    frame_timestamp: z.string().meta({ description: 'HH:MM:SS.mmm' }),
    title: z.string(),
  })
  .meta({ id: 'FingerprintResult' });

export const fingerprintSpec: OperationSpec<'fingerprint', typeof FingerprintRequestSchema> = {
  jobType: 'fingerprint',
  path: '/v1/fingerprint',
  title: 'Fingerprint',
  summary: 'Perceptual hashes (average, perceptual, difference) of one frame, for duplicate detection',
  request: FingerprintRequestSchema,
  result: FingerprintResultSchema,
  cost: () => 1,
  costText: '1 credit',
  mcp: { tool: 'fingerprint', title: 'Fingerprint a video frame' },
  output: 'json',
};
