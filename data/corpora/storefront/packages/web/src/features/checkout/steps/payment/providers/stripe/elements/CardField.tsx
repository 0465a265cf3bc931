import { useEffect, useRef, useState } from 'react';
import { loadStripe, type StripeCardElement } from '@stripe/stripe-js';

const stripePromise = loadStripe(import.meta.env.VITE_STRIPE_PUBLISHABLE_KEY ?? '');

interface CardFieldProps {
  onReady?: () => void;
}

/**
 * Mounts a Stripe card element. Lives this deep because each payment provider
 * brings its own elements (see ../../paypal once that lands).
 */
export function CardField({ onReady }: CardFieldProps) {
  const host = useRef<HTMLDivElement>(null);
  const [card, setCard] = useState<StripeCardElement | null>(null);
  const [error, setError] = useState<string | null>(null);

  // FIXME: no dependency array, so this re-mounts the element on every render.
  useEffect(() => {
    let element: StripeCardElement | undefined;
    stripePromise.then((stripe) => {
      if (!stripe || !host.current) return;
      element = stripe.elements().create('card', { hidePostalCode: true });
      element.mount(host.current);
      element.on('change', (e) => setError(e.error?.message ?? null));
      setCard(element);
      onReady?.();
    });
    return () => element?.destroy();
  });

  useEffect(() => {
    if (card && error) {
      card.focus();
    }
  }, [card, error]);

  return (
    <div className="card-field">
      <div ref={host} className="card-field__input" />
      {error && <p className="card-field__error">{error}</p>}
    </div>
  );
}
