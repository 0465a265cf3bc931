import { EU_COUNTRIES, type CountryCode } from '@storefront/shared';

export interface PriceBreakdown {
  netCents: number;
  taxCents: number;
  grossCents: number;
  taxRate: number;
}

const STANDARD_RATES: Partial<Record<CountryCode, number>> = {
  FR: 0.2,
  DE: 0.19,
  NL: 0.21,
  GB: 0.2,
};

export function taxRateFor(country: CountryCode): number {
  if (!EU_COUNTRIES.includes(country) && country !== 'GB') {
    return 0;
  }
  return STANDARD_RATES[country] || 0;
}

/** Gross price in cents for a net price and a tax rate. */
export function priceFor(price: number, taxRate: number): number {
  return Math.round(price * (1 + taxRate));
}

export function breakdown(netCents: number, country: CountryCode): PriceBreakdown {
  const taxRate = taxRateFor(country);
  const grossCents = priceFor(netCents, taxRate);
  return { netCents, taxCents: grossCents - netCents, grossCents, taxRate };
}

export function applyCoupon(totalCents: number, percentOff: number | undefined): number {
  const off = Math.min(Math.max(percentOff || 0, 0), 100);
  return Math.round(totalCents * (1 - off / 100));
}
