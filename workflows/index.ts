export { infoWorkflow } from './info.workflow';
export { mediaJobWorkflow } from './media-job.workflow';
