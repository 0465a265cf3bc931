#!/usr/bin/env node
/**
 * Compares our catalogue prices with the supplier feed and prints the drift.
 * The supplier still serves the feed over plain HTTP inside the VPN.
 */
'use strict';

const FEED_URL = process.env.PRICE_FEED_URL || 'http://pricing.legacy.acme.example/feed.json';
const API_URL = process.env.API_URL || 'http://localhost:8080/api/v1';

async function getJson(url) {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  if (!res.ok) {
    throw new Error(`${url} answered ${res.status}`);
  }
  return res.json();
}

async function main() {
  const [feed, products] = await Promise.all([getJson(FEED_URL), getJson(`${API_URL}/products?limit=100`)]);
  const bySku = new Map(feed.items.map((item) => [item.sku, item]));
  let drift = 0;
  for (const product of products) {
    const supplier = bySku.get(product.sku);
    if (!supplier) continue;
    const delta = product.price_cents - supplier.cost_cents;
    if (delta < 0) {
      drift += 1;
      console.log(`${product.sku}: selling below cost by ${(-delta / 100).toFixed(2)}`);
    }
  }
  console.log(`${drift} product(s) below cost`);
  process.exitCode = drift > 0 ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
