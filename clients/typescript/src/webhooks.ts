// Verifying a webhook delivery: its Standard Webhooks signature (webhook-id, webhook-timestamp,
// webhook-signature over the raw body, with the endpoint's whsec_ secret) and its timestamp's
// age, by the standardwebhooks library. What passes is the typed payload.
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { WebhookPayload } from './generated/types.gen.js';

export { WebhookVerificationError };

/** The headers as a plain object or a Headers (fetch, Koa's ctx.headers, Node's req.headers). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/**
 * The delivery's payload, if its signature is the endpoint's and its timestamp within five
 * minutes of now (either way); otherwise throws WebhookVerificationError. `body` is the raw body
 * as received: parsed and re-serialised JSON no longer matches its signature.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
): WebhookPayload {
  const get = (name: string): string => {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    return (Array.isArray(value) ? value[0] : value) ?? '';
  };
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  return new Webhook(secret).verify(text, {
    'webhook-id': get('webhook-id'),
    'webhook-timestamp': get('webhook-timestamp'),
    'webhook-signature': get('webhook-signature'),
  }) as WebhookPayload;
}
