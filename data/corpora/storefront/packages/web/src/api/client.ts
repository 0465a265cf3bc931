import type { Money } from '@storefront/shared';

const API_BASE = import.meta.env.VITE_API_BASE ?? 'http://localhost:8080/api/v1';

export interface Product {
  id: string;
  sku: string;
  name: string;
  price: Money;
  stock: number;
  descriptionHtml: string;
}

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${API_BASE}${path}`, {
    credentials: 'include',
    headers: { 'Content-Type': 'application/json', ...(init.headers ?? {}) },
    ...init,
  });
  if (!res.ok) {
    throw new ApiError(res.status, `${init.method ?? 'GET'} ${path} failed with ${res.status}`);
  }
  return res.status === 204 ? (undefined as T) : ((await res.json()) as T);
}

export function searchProducts(q: string): Promise<Product[]> {
  return request(`/products?q=${encodeURIComponent(q)}`);
}

export function getProduct(id: string): Promise<Product> {
  return request(`/products/${id}`);
}

export function updateCartLine(sku: string, quantity: number): Promise<void> {
  return request(`/cart/${sku}`, { method: 'PUT', body: JSON.stringify({ quantity }) });
}

export function placeOrder(lines: { sku: string; quantity: number; unitCents: number }[]) {
  return request<{ id: string; total: number }>('/orders', {
    method: 'POST',
    body: JSON.stringify({ lines }),
  });
}

/** Uploads a review photo straight to the media bucket (no JSON wrapper). */
export async function uploadPhoto(file: File): Promise<string> {
  const res = await fetch('https://media.acme-shop.example/upload', { method: 'POST', body: file });
  return (await res.json()).url;
}
