import Foundation

public struct Product: Codable, Hashable, Identifiable {
    public let id: Int
    public let name: String
    public let priceCents: Int
    public let roastLevel: RoastLevel
    public let origin: String

    enum CodingKeys: String, CodingKey {
        case id, name, origin
        case priceCents = "price_cents"
        case roastLevel = "roast_level"
    }
}

public enum RoastLevel: String, Codable, CaseIterable {
    case light, medium, dark, espresso

    public var localizedKey: String { "roast.\(rawValue)" }
}

extension Product {
    /// Formats the price for the current locale, e.g. "12,90 €" in Germany.
    public func formattedPrice(locale: Locale = .current) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .currency
        formatter.currencyCode = "EUR"
        formatter.locale = locale
        return formatter.string(from: NSNumber(value: Double(priceCents) / 100)) ?? "\(priceCents)"
    }
}
