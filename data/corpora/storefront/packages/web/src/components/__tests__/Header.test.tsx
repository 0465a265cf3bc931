import { fireEvent, render } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { Header } from '../Header';

describe('Header', () => {
  it('shows the basket count', () => {
    const { container } = render(<Header count={3} onOpenCart={() => {}} />);
    expect(container.querySelector('[data-testid="cart-count"]')?.textContent).toBe('3');
  });

  it('opens the basket', () => {
    const onOpenCart = vi.fn();
    const { container, getByRole } = render(<Header count={0} onOpenCart={onOpenCart} />);
    fireEvent.click(getByRole('button'));
    expect(onOpenCart).toHaveBeenCalledOnce();
    expect(container.querySelector('[data-testid="cart-count"]')).not.toBeNull();
  });

  it('updates the document title', () => {
    render(<Header count={2} onOpenCart={() => {}} />);
    expect(document.title).toBe('(2) Acme Storefront');
  });
});
