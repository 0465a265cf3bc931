import { expect, test } from '@playwright/test';

test.describe('basket', () => {
  test('adding a product bumps the badge', async ({ page }) => {
    await page.goto('/');
    await page.getByPlaceholder('Search coffee, tea, gear…').fill('sencha');
    await page.getByRole('button', { name: 'Add to basket' }).first().click();
    await expect(page.locator('[data-testid="cart-count"]')).toHaveText('1');
  });

  test('the basket survives a reload', async ({ page }) => {
    await page.goto('/');
    await page.getByRole('button', { name: 'Add to basket' }).first().click();
    await page.reload();
    await expect(page.locator('[data-testid="cart-count"]')).toHaveText('1');
  });
});
