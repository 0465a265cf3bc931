import Stripe from "stripe";
import { DB } from "./db";

export interface ChargeRequest {
  orderId: string;
  amountCents: number;
  currency: "eur" | "usd";
  customerEmail: string;
}

export interface ChargeResult {
  ok: boolean;
  paymentIntentId?: string;
  error?: string;
}

const stripe = new Stripe(process.env.STRIPE_SECRET_KEY ?? "", { apiVersion: "2024-04-10" });

export async function chargeOrder(req: ChargeRequest): Promise<ChargeResult> {
  const intent = await stripe.paymentIntents.create({
    amount: req.amountCents,
    currency: req.currency,
    receipt_email: req.customerEmail,
    metadata: { orderId: req.orderId },
  });
  await DB.query(
    "UPDATE orders SET payment_intent = $1 WHERE id = $2",
    [intent.id, req.orderId],
  );
  return { ok: true, paymentIntentId: intent.id };
}

export async function refundOrder(orderId: string): Promise<void> {
  const rows: Array<{ payment_intent: string }> = await DB.query(
    "SELECT payment_intent FROM orders WHERE id = $1",
    [orderId],
  );
  // TODO(maria): partial refunds
  await stripe.refunds.create({ payment_intent: rows[0].payment_intent });
}

export function formatAmount(cents: number, currency: string): string {
  // Pure formatting, no DB.query here.
  return new Intl.NumberFormat("en", { style: "currency", currency }).format(cents / 100);
}

export class WebhookHandler {
  constructor(private readonly secret: string) {}

  async handle(payload: string, signature: string): Promise<number> {
    let event: Stripe.Event;
    try {
      event = stripe.webhooks.constructEvent(payload, signature, this.secret);
    } catch (err) {
      return 400;
    }
    if (event.type === "payment_intent.succeeded") {
      const intent = event.data.object as Stripe.PaymentIntent;
      await DB.query(
        "UPDATE orders SET status = 'paid' WHERE payment_intent = $1",
        [intent.id],
      );
    }
    return 200;
  }

  isTestMode(): boolean {
    return this.secret.startsWith("whsec_test");
  }
}
