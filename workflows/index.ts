export { infoWorkflow } from './info.workflow';
export { mediaJobWorkflow } from '../jobs/media-job.workflow';
export { webhookDeliveryWorkflow } from '../webhooks/delivery.workflow';
export { grantMonthlyCreditsWorkflow, reconcileJobsWorkflow, sweepStorageWorkflow, updateYtdlpWorkflow } from './maintenance.workflow';
export { batchWorkflow } from '../batches/batch.workflow';
export { subscriptionCheckWorkflow } from '../subscriptions/check.workflow';
