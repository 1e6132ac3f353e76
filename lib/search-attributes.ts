// Temporal search attributes of job and webhook-delivery workflows: pure, so the workflow bundle can load it.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const JOB_ID = defineSearchAttributeKey('JobId', SearchAttributeType.KEYWORD);
export const ACCOUNT_ID = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);
export const JOB_TYPE = defineSearchAttributeKey('JobType', SearchAttributeType.KEYWORD);
/** The job's status as the API reports it: pending, processing, completed, failed. */
export const JOB_STATUS = defineSearchAttributeKey('JobStatus', SearchAttributeType.KEYWORD);

/** Every attribute with its type name, as `temporal operator search-attribute create` and the dev server's `--search-attribute` take them. */
export const SEARCH_ATTRIBUTES = [JOB_ID, ACCOUNT_ID, JOB_TYPE, JOB_STATUS].map((k) => ({ name: k.name, type: 'Keyword' as const }));
