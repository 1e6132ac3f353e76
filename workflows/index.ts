export { infoWorkflow } from './info.workflow';
export { mediaJobWorkflow } from './media-job.workflow';
export { webhookDeliveryWorkflow } from './webhook-delivery.workflow';
export { reconcileJobsWorkflow, sweepStorageWorkflow } from './maintenance.workflow';
