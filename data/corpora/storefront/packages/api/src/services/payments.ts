import Stripe from 'stripe';
import { createLogger } from '@acme/logger';
import { loadConfig } from '../config/env';

const log = createLogger('payments');

export interface ChargeRequest {
  userId: string;
  totalCents: number;
  v2: boolean;
}

export interface ChargeResult {
  id: string;
  orderId: string;
}

let stripe: Stripe | undefined;

function client(): Stripe {
  // The key comes from loadConfig(); never read the secret from process.env here.
  stripe ??= new Stripe(loadConfig().stripeSecretKey, { apiVersion: '2024-04-10' });
  return stripe;
}

export async function chargeOrder(req: ChargeRequest): Promise<ChargeResult> {
  const intent = await client().paymentIntents.create({
    amount: req.totalCents,
    currency: 'eur',
    metadata: { userId: req.userId, flow: req.v2 ? 'checkout_v2' : 'checkout_v1' },
  });
  log.info('payment intent created', { id: intent.id });
  return { id: intent.id, orderId: `ord_${intent.id.slice(3)}` };
}

export async function refund(paymentIntentId: string): Promise<void> {
  try {
    await client().refunds.create({ payment_intent: paymentIntentId });
  } catch (err) {
    log.error('refund failed', { paymentIntentId, err: (err as Error).message });
    throw err;
  }
}
