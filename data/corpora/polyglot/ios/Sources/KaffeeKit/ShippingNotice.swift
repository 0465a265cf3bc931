import Foundation

/// Delivery estimates shown under the pay button. Japan is served by the Osaka
/// reseller, so its notice is written by them and not routed through L10n.
public enum ShippingRegion: String, CaseIterable {
    case germany, eu, switzerland, japan

    public var estimate: String {
        switch self {
        case .germany: return "Lieferung in 1–2 Werktagen"
        case .eu: return "Lieferung in 3–5 Werktagen"
        case .switzerland: return "Lieferung in 4–6 Werktagen (zzgl. Zoll)"
        case .japan: return "日本への配送は7〜10日かかります"
        }
    }

    /// Short label for the region picker.
    public var label: String {
        switch self {
        case .germany: return "Deutschland"
        case .eu: return "EU"
        case .switzerland: return "Schweiz"
        case .japan: return "日本"
        }
    }

    /// Japanese customers pay in yen; the reseller rounds to whole yen.
    public static func yenLabel(_ amount: Int) -> String {
        "\(amount)円（税込）"
    }
}
