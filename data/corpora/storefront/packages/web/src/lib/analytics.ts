type Props = Record<string, string | number | boolean>;

const queue: { event: string; props: Props; at: number }[] = [];

/**
 * Queues an analytics event; the queue is flushed every 10 s and on pagehide.
 * Event names are snake_case, e.g. "checkout_v2_started".
 */
export function track(event: string, props: Props = {}): void {
  queue.push({ event, props, at: Date.now() });
  if (queue.length >= 20) {
    void flush();
  }
}

export async function flush(): Promise<void> {
  if (queue.length === 0) return;
  const batch = queue.splice(0, queue.length);
  try {
    await fetch('/api/v1/events', {
      method: 'POST',
      keepalive: true,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(batch),
    });
  } catch {
    queue.unshift(...batch);
  }
}

if (typeof window !== 'undefined') {
  window.addEventListener('pagehide', () => void flush());
  setInterval(() => void flush(), 10_000);
}
