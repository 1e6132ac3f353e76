import { BigIntType, EntitySchema } from '@mikro-orm/core';

/** A file an account sent (POST /v1/uploads), usable as any job's source until it expires. */
export class Upload {
  /** `upl_` and 24 letters and digits. */
  id!: string;
  accountId!: string;
  /** The name the client gave, for display only: the bytes live under the id. */
  filename!: string;
  size!: number;
  /** What the content was found to be (`video/mp4`, `audio/mpeg`…), not what the client claimed. */
  contentType!: string;
  createdAt: Date = new Date();
  expiresAt!: Date;
}

export const UploadEntitySchema = new EntitySchema<Upload>({
  class: Upload,
  tableName: 'uploads',
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    id: { type: 'string', primary: true, length: 40 },
    accountId: { type: 'string', length: 36 },
    filename: { type: 'text' },
    size: { type: new BigIntType('number') },
    contentType: { type: 'string', length: 128 },
    createdAt: { type: 'datetime', length: 3 },
    expiresAt: { type: 'datetime', length: 3 },
  },
});
