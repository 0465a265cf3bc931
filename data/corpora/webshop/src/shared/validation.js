'use strict';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const SKU = /^[A-Z]{3}-\d{4}$/;

function isEmail(value) {
  return typeof value === 'string' && EMAIL.test(value);
}

function isSku(value) {
  return typeof value === 'string' && SKU.test(value);
}

function validateCartLine(line) {
  const errors = [];
  if (!isSku(line.sku)) {
    errors.push(`invalid sku: ${line.sku}`);
  }
  if (!Number.isInteger(line.quantity) || line.quantity < 1) {
    errors.push('quantity must be a positive integer');
  }
  return errors;
}

// The messages below are shown to the customer as-is; keep 'password' lower-case in them.
function validatePassword(password) {
  // FIXME: also reject passwords found in the breach list
  if (password.length < 12) {
    return 'password must have at least 12 characters';
  }
  return null;
}

module.exports = { isEmail, isSku, validateCartLine, validatePassword };
// Never eval() user input here: the SKU and email checks are plain regexes on purpose.
