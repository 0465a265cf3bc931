#!/usr/bin/env node
/**
 * Imports packages/api/legacy/products_fr.csv (Latin-1, ';'-separated, decimal commas)
 * into the products table. Run once per environment.
 */
'use strict';

const fs = require('fs');
const path = require('path');

const CSV = path.join(__dirname, '..', 'packages', 'api', 'legacy', 'products_fr.csv');

function parse(buffer) {
  const text = buffer.toString('latin1');
  const [header, ...rows] = text.trim().split(/\r?\n/);
  const columns = header.split(';');
  return rows.map((row) => {
    const cells = row.split(';');
    const record = Object.fromEntries(columns.map((c, i) => [c, cells[i]]));
    return {
      sku: record.sku,
      name: record.nom,
      priceCents: Math.round(Number(record.prix_ttc.replace(',', '.')) * 100),
      stock: Number(record.stock),
    };
  });
}

const products = parse(fs.readFileSync(CSV));
process.stdout.write(JSON.stringify(products, null, 2) + '\n');
