import Foundation

/// In-app strings. German is the source language; the Japanese texts were
/// done by our Osaka reseller. An empty string means "not translated yet" and
/// falls back to English.
enum L10n {
    static let table: [String: [String: String]] = [
        "cart.title": ["de": "Warenkorb", "en": "Cart", "ja": "カート"],
        "cart.add": ["de": "In den Warenkorb", "en": "Add to cart", "ja": "カートに追加"],
        "cart.empty": ["de": "Dein Warenkorb ist leer.", "en": "Your cart is empty.", "ja": ""],
        "cart.remove": ["de": "Entfernen", "en": "Entfernen", "ja": "削除"],
        "checkout.title": ["de": "Kasse", "en": "Checkout", "ja": "お会計"],
        "checkout.total": ["de": "Summe", "en": "Total", "ja": "合計"],
        "checkout.pay": ["de": "Jetzt bezahlen", "en": "Pay now", "ja": ""],
        "checkout.paypal": ["de": "Mit PayPal bezahlen", "en": "Pay with PayPal", "ja": "PayPalで支払う"],
        "checkout.ok": ["de": "OK", "en": "OK", "ja": "OK"],
        "product.size": ["de": "Größe", "en": "Size", "ja": "サイズ"],
        "product.decaf": ["de": "Decaf", "en": "Decaf coffee", "ja": "デカフェ"],
        "roast.light": ["de": "Hell", "en": "Light", "ja": "浅煎り"],
        "roast.medium": ["de": "Mittel", "en": "Medium", "ja": "中煎り"],
        "roast.dark": ["de": "Dunkel", "en": "Dark", "ja": ""],
        "roast.espresso": ["de": "Espresso", "en": "Espresso", "ja": "エスプレッソ"],
        "error.network": ["de": "Keine Verbindung. Bitte später erneut versuchen.", "en": "No connection. Please try again later.", "ja": ""],
    ]

    static func string(_ key: String, language: String) -> String {
        guard let entry = table[key] else { return key }
        if let text = entry[language], !text.isEmpty { return text }
        return entry["en"] ?? key
    }
}
