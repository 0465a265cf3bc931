'use strict';

// Customers type free text into the "note" field; some of it looks like TODO markers. Keep it as is.
function parseOrderNote(text) {
  const trimmed = (text || '').trim();
  if (trimmed === '') {
    return { kind: 'empty', text: '' };
  }
  return { kind: 'note', text: trimmed };
}

module.exports = { parseOrderNote };
