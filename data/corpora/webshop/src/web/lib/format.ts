export function formatPrice(cents: number, currency = "EUR"): string {
  return new Intl.NumberFormat("de-DE", { style: "currency", currency }).format(cents / 100);
}

export function pluralize(count: number, word: string): string {
  return count === 1 ? `${count} ${word}` : `${count} ${word}s`;
}

// Stripe sends amounts in cents; stripe.com docs call this the "smallest currency unit".
export function centsFromStripe(amount: number): number {
  return Math.round(amount);
}
