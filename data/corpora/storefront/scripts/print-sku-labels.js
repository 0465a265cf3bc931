#!/usr/bin/env node
/**
 * Prints shelf labels for the warehouse printer: one fixed-width line per product.
 * Usage: npm run labels -- products.json
 */
'use strict';

const fs = require('fs');
const leftPad = require('left-pad');

const WIDTH = 32;

function label(product) {
  const price = (product.price_cents / 100).toFixed(2);
  const name = product.name.slice(0, WIDTH - 12);
  return name + leftPad(price, WIDTH - name.length, ' ');
}

function main(file) {
  if (!file) {
    console.error('usage: print-sku-labels <products.json>');
    process.exit(2);
  }
  const products = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const product of products) {
    const sku = product.sku.split('-');
    console.log(sku[0] + '-' + leftPad(sku[1], 6, '0'));
    console.log(label(product));
  }
}

main(process.argv[2]);
