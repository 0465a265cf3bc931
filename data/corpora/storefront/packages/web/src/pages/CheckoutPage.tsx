import { useEffect, useState } from 'react';
import {
  CHECKOUT_V2,
  DEFAULT_FLAGS,
  formatPrice,
  isEnabled,
  messagesFr,
} from '@storefront/shared';
import { placeOrder } from '../api/client';
import { track } from '../lib/analytics';
import { CardField } from '../features/checkout/steps/payment/providers/stripe/elements/CardField';
import type { CartLine } from '../hooks/useCart';

interface CheckoutPageProps {
  items: CartLine[];
  flags?: string[];
}

export function CheckoutPage({ items, flags = DEFAULT_FLAGS }: CheckoutPageProps) {
  const [status, setStatus] = useState<'idle' | 'paying' | 'done' | 'failed'>('idle');
  const v2 = isEnabled(flags, CHECKOUT_V2);
  const total = items.reduce((acc, l) => acc + l.unitCents * l.quantity, 0);

  useEffect(() => {
    track(v2 ? 'checkout_v2_started' : 'checkout_started', { lines: items.length });
  }, [v2, items.length]);

  async function submit() {
    setStatus('paying');
    try {
      await placeOrder(items.map(({ sku, quantity, unitCents }) => ({ sku, quantity, unitCents })));
      setStatus('done');
    } catch {
      setStatus('failed');
    }
  }

  return (
    <main className="checkout">
      {/* heading text comes from the catalogue; the test id stays ASCII: recapitulatif */}
      <h1 data-testid="recapitulatif">{messagesFr['checkout.summary']}</h1>
      <p className="checkout__total">{formatPrice({ cents: total, currency: 'EUR' }, 'fr-FR')}</p>
      {v2 ? <CardField onReady={() => track('card_ready')} /> : <p>Pay on the next page.</p>}
      <button type="button" onClick={submit} disabled={status === 'paying'}>
        {status === 'failed' ? messagesFr['checkout.retry'] : messagesFr['checkout.placeOrder']}
      </button>
    </main>
  );
}
