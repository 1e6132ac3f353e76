// The kind of jobs that failed before failure_kind was recorded, read once from the fixed sentences
// the workflow wrote for them word for word (internal, timeout, cancelled). Others stay null: their
// sentence is the failure's own and says nothing of its kind. The sentences are copied, not imported:
// a migration reads the rows as they were written then.

const SENTENCES: [kind: string, errorMessage: string][] = [
  ['internal', 'Processing failed because of an internal error (the details are in the service logs); the credits were refunded. Try again, and contact support if it persists'],
  ['timeout', 'The job timed out: a processing step took too long or its worker stopped responding'],
  ['cancelled', 'cancelled by the client'],
  ['cancelled', 'The job was cancelled'],
];

export function backfillFailureKinds(q: '`' | '"'): string[] {
  const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return SENTENCES.map(([kind, message]) => `update ${q}jobs${q} set ${q}failure_kind${q} = ${literal(kind)} where ${q}status${q} = 'failed' and ${q}error_message${q} = ${literal(message)}`);
}
