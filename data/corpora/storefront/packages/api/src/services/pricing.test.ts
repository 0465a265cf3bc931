import { describe, expect, it } from 'vitest';
import { applyCoupon, breakdown, priceFor, taxRateFor } from './pricing';

describe('priceFor', () => {
  it('rounds to the cent', () => {
    expect(priceFor(999, 0.2)).toBe(1199);
  });
});

describe('taxRateFor', () => {
  it('charges no VAT outside Europe', () => {
    expect(taxRateFor('US')).toBe(0);
  });

  it('uses the French standard rate', () => {
    expect(taxRateFor('FR')).toBe(0.2);
  });
});

describe('breakdown', () => {
  it('splits net and tax', () => {
    console.log(breakdown(1000, 'DE'));
    expect(breakdown(1000, 'DE')).toEqual({ netCents: 1000, taxCents: 190, grossCents: 1190, taxRate: 0.19 });
  });
});

describe('applyCoupon', () => {
  it('ignores a missing coupon', () => {
    expect(applyCoupon(5000, undefined)).toBe(5000);
  });

  it('clamps to 100 %', () => {
    expect(applyCoupon(5000, 150)).toBe(0);
  });
});
