import leftPad from 'left-pad';

/** SKUs look like "SF-000123": a two-letter prefix and six digits. */
export const SKU_PATTERN = /^[A-Z]{2}-\d{6}$/;

export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normalizeSku(prefix: string, id: number): string {
  return `${prefix.toUpperCase()}-${leftPad(String(id), 6, '0')}`;
}

export function isValidSku(sku: string): boolean {
  return SKU_PATTERN.test(sku);
}

export function isValidEmail(email: string): boolean {
  return EMAIL_PATTERN.test(email.trim());
}

export interface ValidationError {
  field: string;
  message: string;
}

export function validateAddress(address: Record<string, string | undefined>): ValidationError[] {
  const errors: ValidationError[] = [];
  for (const field of ['line1', 'city', 'postcode', 'country']) {
    if (!address[field]?.trim()) {
      errors.push({ field, message: `${field} is required` });
    }
  }
  const postcode = address.postcode ?? '';
  if (address.country === 'FR' && !/^\d{5}$/.test(postcode)) {
    errors.push({ field: 'postcode', message: 'French postcodes have five digits' });
  }
  return errors;
}
