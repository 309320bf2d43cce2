// Signing secrets and signatures, in the Standard Webhooks format (standardwebhooks.com): a
// secret is `whsec_` + base64 of 32 random bytes; a signature is `v1,<base64 HMAC-SHA256 of
// "<webhook-id>.<webhook-timestamp>.<body>">`, computed by the standardwebhooks package. While
// a rotated-out secret still counts, a delivery carries both signatures, space-separated, and
// a receiver holding either secret accepts it.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three Standard Webhooks headers of one attempt, signed with every secret given. */
export function signDelivery(
  secrets: readonly string[],
  messageId: string,
  at: Date,
  body: string,
): SignedHeaders {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets
      .map((secret) => new Webhook(secret).sign(messageId, at, body))
      .join(' '),
  };
}
