/**
 * Feature flags. The server sends the enabled set in the bootstrap payload
 * as lower-case keys ("checkout_v2"); code compares against these constants.
 */
export const CHECKOUT_V2 = 'checkout_v2';
export const WISHLIST = 'wishlist';
export const EXPRESS_SHIPPING = 'express_shipping';

export type FlagName = typeof CHECKOUT_V2 | typeof WISHLIST | typeof EXPRESS_SHIPPING;

export function isEnabled(flags: readonly string[], name: FlagName): boolean {
  return flags.includes(name);
}

export const DEFAULT_FLAGS: FlagName[] = [WISHLIST];
