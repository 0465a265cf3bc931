import XCTest
@testable import KaffeeKit

final class CartStoreTests: XCTestCase {
    private var store: CartStore!

    override func setUp() {
        super.setUp()
        store = CartStore(api: APIClient(base: URL(string: "https://example.invalid/")!))
    }

    private func product(_ id: Int, cents: Int = 1290) -> Product {
        Product(id: id, name: "Bohne \(id)", priceCents: cents, roastLevel: .medium, origin: "Äthiopien")
    }

    func testAddRespectsLimit() {
        let bag = product(1)
        for _ in 0..<(CartStore.maxPerProduct + 3) { store.add(bag) }
        XCTAssertEqual(store.items[bag], CartStore.maxPerProduct)
    }

    func testTotal() {
        store.add(product(1, cents: 1000))
        store.add(product(2, cents: 250))
        store.add(product(2, cents: 250))
        XCTAssertEqual(store.total, 1500)
    }

    func testRemoveLastDropsProduct() {
        let bag = product(3)
        store.add(bag)
        store.remove(bag)
        XCTAssertNil(store.items[bag])
    }
}
