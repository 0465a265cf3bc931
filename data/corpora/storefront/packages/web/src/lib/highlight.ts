/**
 * Highlights the search term inside a product name. The name comes from our own
 * catalogue, but we still escape it before building markup.
 */
function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

export function highlight(el: HTMLElement, name: string, term: string): void {
  const safe = escapeHtml(name);
  if (!term) {
    el.textContent = name;
    return;
  }
  const pattern = new RegExp(`(${term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})`, 'gi');
  el.innerHTML = safe.replace(pattern, '<mark>$1</mark>');
}
