import XCTest
@testable import KaffeeKit

final class LocalizationTests: XCTestCase {
    func testJapaneseTotal() {
        XCTAssertEqual(L10n.string("checkout.total", language: "ja"), "合計")
    }

    func testEmptyJapaneseFallsBackToEnglish() {
        // "ja" is empty for cart.empty, so the English text is used.
        XCTAssertEqual(L10n.string("cart.empty", language: "ja"), "Your cart is empty.")
    }

    func testUnknownKeyIsReturned() {
        XCTAssertEqual(L10n.string("nope", language: "de"), "nope")
    }

    func testEveryKeyHasGermanAndEnglish() {
        for (key, entry) in L10n.table {
            XCTAssertFalse(entry["de", default: ""].isEmpty, "missing de for \(key)")
            XCTAssertFalse(entry["en", default: ""].isEmpty, "missing en for \(key)")
        }
    }
}
