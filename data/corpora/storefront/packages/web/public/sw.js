/* Service worker: caches the app shell and serves offline.html when the network is down. */
const CACHE = 'storefront-shell-v3';
const SHELL = ['/', '/offline.html', '/favicon.png', '/fonts/inter-var.woff2'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)));
  console.log('[sw] installed', CACHE);
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys().then((keys) =>
      Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))),
    ),
  );
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || request.url.includes('/api/')) {
    return;
  }
  event.respondWith(
    fetch(request).catch(async () => {
      console.log('[sw] offline, serving', request.url);
      const cached = await caches.match(request);
      return cached || caches.match('/offline.html');
    }),
  );
});
