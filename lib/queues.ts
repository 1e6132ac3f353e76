// Task queue names: pure constants, shared by workflows (bundled) and the worker table (workers/queues.ts).

/** Every task queue; the worker table in workers/queues.ts declares each one's activities and concurrency. */
export const TASK_QUEUES = ['control', 'media-info', 'media-fetch', 'media-process', 'media-speech', 'webhooks'] as const;
export type TaskQueue = (typeof TASK_QUEUES)[number];

export function isTaskQueue(name: string): name is TaskQueue {
  return (TASK_QUEUES as readonly string[]).includes(name);
}
