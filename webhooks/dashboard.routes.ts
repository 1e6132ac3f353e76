import Router from '@koa/router';
import { rotateWebhookSecret } from '../accounts/repository';
import { MAX_ENDPOINTS_PER_ACCOUNT } from './events';
import type { ApiDeps } from '../api/context';
import { PageQuerySchema } from '../api/schemas';
import { createEndpoint, deleteEndpoint, deliveryPage, listEndpoints, loadEndpoint, sendTestDelivery, updateEndpoint } from './service';
import { parseInput } from '../lib/validation';
import { CreateWebhookSchema, UpdateWebhookSchema } from './routes';
import { formList, formString, invalidDetail, redirectWithFlash, renderPage } from '../api/dashboard/render';
import { signedInAccount, type DashboardContext, type DashboardState } from '../api/dashboard/session';
import { deleteWebhookView, rotateSecretView, webhookView, webhooksView, type EndpointFormValues, type WebhooksViewData } from './dashboard.view';

const EMPTY_FORM: EndpointFormValues = { url: '', events: [], isActive: true };

/** The endpoint form as posted. */
function postedEndpoint(ctx: DashboardContext): EndpointFormValues {
  return { url: formString(ctx, 'url').trim(), events: formList(ctx, 'events'), isActive: formString(ctx, 'is_active') === 'true' };
}

async function showList(ctx: DashboardContext, extra: Partial<WebhooksViewData> = {}, status = 200): Promise<void> {
  const endpoints = await listEndpoints(ctx.state.em, signedInAccount(ctx));
  await renderPage(ctx, 'Webhooks', (page) => webhooksView(page, { endpoints, form: EMPTY_FORM, maxEndpoints: MAX_ENDPOINTS_PER_ACCOUNT, ...extra }), { status, wide: true });
}

/** Webhook endpoints through the same service as REST, the delivery log, and the account's per-job secret. */
export function webhooksPages(deps: ApiDeps): Router<DashboardState> {
  const router = new Router<DashboardState>();
  const load = (ctx: DashboardContext) => loadEndpoint(ctx.state.em, signedInAccount(ctx), ctx.params.id ?? '');

  async function showEndpoint(ctx: DashboardContext, opts: { form?: EndpointFormValues; error?: string } = {}, status = 200): Promise<void> {
    const endpoint = await load(ctx);
    const cursor = typeof ctx.query.cursor === 'string' && ctx.query.cursor ? ctx.query.cursor : undefined;
    const log = await deliveryPage(ctx.state.em, endpoint, parseInput(PageQuerySchema, { cursor, limit: 25 }));
    const form = opts.form ?? { url: endpoint.url, events: endpoint.events, isActive: endpoint.isActive };
    await renderPage(ctx, 'Webhook endpoint', (page) => webhookView(page, { endpoint, form, error: opts.error, log, cursor }), { status, wide: true });
  }

  router.get('/dashboard/webhooks', (ctx) => showList(ctx));

  // The endpoint's secret is in this response only (REST shows it once, at creation, too).
  router.post('/dashboard/webhooks', async (ctx) => {
    const form = postedEndpoint(ctx);
    try {
      const created = await createEndpoint(ctx.state.em, deps, signedInAccount(ctx), parseInput(CreateWebhookSchema, { url: form.url, events: form.events }));
      await showList(ctx, { created });
    } catch (err) {
      await showList(ctx, { form, error: invalidDetail(err) }, 422);
    }
  });

  router.post('/dashboard/webhooks/secret/reveal', async (ctx) => {
    await showList(ctx, { accountSecret: { value: signedInAccount(ctx).webhookSecret, rotated: false } });
  });

  router.get('/dashboard/webhooks/secret/rotate', async (ctx) => {
    await renderPage(ctx, 'Rotate the per-job webhook secret', (page) => rotateSecretView(page));
  });

  router.post('/dashboard/webhooks/secret/rotate', async (ctx) => {
    const secret = await rotateWebhookSecret(ctx.state.em, signedInAccount(ctx).id);
    await showList(ctx, { accountSecret: { value: secret, rotated: true } });
  });

  router.get('/dashboard/webhooks/:id', (ctx) => showEndpoint(ctx));

  router.post('/dashboard/webhooks/:id', async (ctx) => {
    const endpoint = await load(ctx);
    const form = postedEndpoint(ctx);
    try {
      await updateEndpoint(ctx.state.em, deps, endpoint, parseInput(UpdateWebhookSchema, { url: form.url, events: form.events, is_active: form.isActive }));
      await redirectWithFlash(ctx, `/dashboard/webhooks/${endpoint.id}`, 'Endpoint saved.');
    } catch (err) {
      await showEndpoint(ctx, { form, error: invalidDetail(err) }, 422);
    }
  });

  router.post('/dashboard/webhooks/:id/test', async (ctx) => {
    const endpoint = await load(ctx);
    const d = await sendTestDelivery(ctx.state.em, deps, endpoint);
    if (d.status === 'succeeded') {
      await redirectWithFlash(ctx, `/dashboard/webhooks/${endpoint.id}`, `Test delivery answered ${d.statusCode} in ${d.responseTimeMs} ms.`);
      return;
    }
    const why = d.error ?? `the endpoint answered HTTP ${d.statusCode}`;
    await redirectWithFlash(ctx, `/dashboard/webhooks/${endpoint.id}`, `Test delivery failed: ${why}. Check that the endpoint's URL is right and that it answers with a 2xx status, then send another test.`, 'error');
  });

  router.get('/dashboard/webhooks/:id/delete', async (ctx) => {
    const endpoint = await load(ctx);
    await renderPage(ctx, 'Delete webhook endpoint', (page) => deleteWebhookView(page, endpoint));
  });

  router.post('/dashboard/webhooks/:id/delete', async (ctx) => {
    const endpoint = await load(ctx);
    await deleteEndpoint(ctx.state.em, endpoint);
    await redirectWithFlash(ctx, '/dashboard/webhooks', 'Endpoint deleted.');
  });

  return router;
}
