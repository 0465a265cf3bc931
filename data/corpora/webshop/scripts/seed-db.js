'use strict';

const { DB } = require('../src/server/db');

const PRODUCTS = [
  { sku: 'LMP-0001', name: 'Desk lamp', category: 'lamps', priceCents: 3490 },
  { sku: 'LMP-0002', name: 'Floor lamp', category: 'lamps', priceCents: 8900 },
  { sku: 'CHR-0001', name: 'Oak chair', category: 'chairs', priceCents: 12900 },
  { sku: 'TBL-0001', name: 'Side table', category: 'tables', priceCents: 7400 },
];

async function seed() {
  await DB.query('TRUNCATE products, stock RESTART IDENTITY CASCADE');
  for (const p of PRODUCTS) {
    await DB.query(
      'INSERT INTO products (sku, name, category, price_cents) VALUES ($1, $2, $3, $4)',
      [p.sku, p.name, p.category, p.priceCents],
    );
    await DB.query('INSERT INTO stock (sku, available, reserved) VALUES ($1, 25, 0)', [p.sku]);
  }
  console.log(`seeded ${PRODUCTS.length} products`);
}

seed()
  .then(() => DB.close())
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
