import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, getProduct, searchProducts } from './client';

const fetchMock = vi.fn();
vi.stubGlobal('fetch', fetchMock);

afterEach(() => fetchMock.mockReset());

describe('api client', () => {
  it('encodes the search query', async () => {
    fetchMock.mockResolvedValue(new Response('[]', { status: 200 }));
    await searchProducts('café & thé');
    expect(fetchMock).toHaveBeenCalledWith(
      expect.stringContaining('/products?q=caf%C3%A9%20%26%20th%C3%A9'),
      expect.anything(),
    );
  });

  it('throws ApiError on 404', async () => {
    fetchMock.mockResolvedValue(new Response('{"error":"product not found"}', { status: 404 }));
    await expect(getProduct('nope')).rejects.toBeInstanceOf(ApiError);
  });
});
