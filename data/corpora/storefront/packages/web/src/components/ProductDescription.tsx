import { sanitize } from '../vendor/sanitize/sanitize-lite';

interface ProductDescriptionProps {
  html: string;
}

/** Product descriptions are authored in the CMS as HTML; sanitize before rendering. */
export function ProductDescription({ html }: ProductDescriptionProps) {
  const clean = sanitize(html, { allowedTags: ['p', 'ul', 'li', 'strong', 'em', 'a'] });
  return <div className="product-description" dangerouslySetInnerHTML={{ __html: clean }} />;
}
