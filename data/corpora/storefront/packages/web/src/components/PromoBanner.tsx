import { useEffect, useState } from 'react';
import { sanitize } from '../vendor/sanitize/sanitize-lite';

interface Promo {
  id: string;
  html: string;
  endsAt: string;
}

export function PromoBanner() {
  const [promo, setPromo] = useState<Promo | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    fetch('/api/v1/promos/current', { signal: controller.signal })
      .then((res) => (res.ok ? res.json() : null))
      .then(setPromo)
      .catch(() => setPromo(null));
    return () => controller.abort();
  }, []);

  if (!promo || new Date(promo.endsAt) < new Date()) {
    return null;
  }
  return (
    <div
      className="promo-banner"
      role="note"
      dangerouslySetInnerHTML={{ __html: sanitize(promo.html) }}
    />
  );
}
