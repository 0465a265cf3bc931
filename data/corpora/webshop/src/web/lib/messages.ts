// UI strings. German is the default locale; keys stay ASCII, values are what the translators wrote.

export type Messages = Record<
  "cartTitle" | "checkout" | "size" | "sizeGuide" | "chooseSize" | "returns" | "confirmation" | "soldOut",
  string
>;

export const de: Messages = {
  cartTitle: "Warenkorb",
  checkout: "Zur Kasse",
  size: "Größe",
  sizeGuide: "Größentabelle",
  chooseSize: "Bitte wähle eine Größe",
  returns: "Kostenlose Rückgabe innerhalb von 30 Tagen",
  confirmation: "Bestellbestätigung",
  soldOut: "Ausverkauft",
};

// Swiss German has no ß, so the de-CH bundle spells the size strings with "ss".
export const deCH: Messages = {
  ...de,
  size: "Grösse",
  sizeGuide: "Grössentabelle",
  chooseSize: "Bitte wähle eine Grösse",
};

export const en: Messages = {
  cartTitle: "Cart",
  checkout: "Checkout",
  size: "Size",
  sizeGuide: "Size guide",
  chooseSize: "Please choose a size",
  returns: "Free returns within 30 days",
  confirmation: "Order confirmation",
  soldOut: "Sold out",
};

export function messagesFor(locale: string): Messages {
  if (locale === "de-CH") {
    return deCH;
  }
  return locale.startsWith("de") ? de : en;
}
