#!/usr/bin/env node
/**
 * One-off refund tool for support. Needs the live secret key in the environment:
 *   STRIPE_SECRET_KEY=sk_live_... node scripts/refund-order.js pi_123
 */
'use strict';

const Stripe = require('stripe');

async function main(paymentIntentId) {
  if (!paymentIntentId) {
    console.error('usage: refund-order <payment_intent_id>');
    process.exit(2);
  }
  const stripe = new Stripe(process.env.STRIPE_SECRET_KEY, { apiVersion: '2024-04-10' });
  const refund = await stripe.refunds.create({ payment_intent: paymentIntentId });
  console.log(`refund ${refund.id}: ${refund.status}`);
}

main(process.argv[2]).catch((err) => {
  console.error(err.message);
  process.exit(1);
});
