// Webhook events and delivery targets: pure, shared by the API, the activities and the delivery workflow.

export const WEBHOOK_EVENTS = ['job.completed', 'job.failed', 'batch.completed', 'subscription.paused'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const MAX_ENDPOINTS_PER_ACCOUNT = 10;

/** Who one delivery attempt goes to; attempts of one event to one target share `deliveryId`. */
export interface DeliveryTarget {
  /** The `webhook-id` header of every attempt. */
  deliveryId: string;
  accountId: string;
  /** null for a job's own webhook_url. */
  webhookId: number | null;
  url: string;
  event: string;
  jobId: string;
  attempt: number;
}
