export { infoWorkflow } from './info.workflow';
export { mediaJobWorkflow } from './media-job.workflow';
export { webhookDeliveryWorkflow } from './webhook-delivery.workflow';
export { grantMonthlyCreditsWorkflow, reconcileJobsWorkflow, sweepStorageWorkflow } from './maintenance.workflow';
