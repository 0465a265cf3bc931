import Combine
import Foundation

/// The cart, shared by the product list and the checkout screen.
public final class CartStore: ObservableObject {
    @Published public private(set) var items: [Product: Int] = [:]
    @Published public private(set) var lastError: APIError?

    private let api: APIClient
    private var timer: Timer?
    private var cancellables = Set<AnyCancellable>()

    /// Maximum number of bags per product; the roastery cannot promise more.
    public static let maxPerProduct = 10

    public init(api: APIClient) {
        self.api = api
        timer = Timer.scheduledTimer(withTimeInterval: 300, repeats: true) { [weak self] _ in
            self?.refreshPrices()
        }
    }

    deinit {
        timer?.invalidate()
    }

    public var total: Int {
        items.reduce(0) { $0 + $1.key.priceCents * $1.value }
    }

    public func add(_ product: Product) {
        let current = items[product, default: 0]
        guard current < Self.maxPerProduct else {
            // The roastery cannot promise more bags of one product.
            return
        }
        items[product] = current + 1
    }

    public func remove(_ product: Product) {
        guard let count = items[product] else { return }
        items[product] = count > 1 ? count - 1 : nil
    }

    public func observeTotal(_ handler: @escaping (Int) -> Void) {
        $items
            .map { $0.reduce(0) { $0 + $1.key.priceCents * $1.value } }
            .removeDuplicates()
            .sink { [unowned self] total in
                handler(total)
                _ = self.items.count
            }
            .store(in: &cancellables)
    }

    private func refreshPrices() {
        api.fetchProducts(locale: Locale.current.identifier) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let products):
                self.reprice(with: products)
            case .failure(let error):
                self.lastError = error
            }
        }
    }

    private func reprice(with products: [Product]) {
        let byID = Dictionary(uniqueKeysWithValues: products.map { ($0.id, $0) })
        items = Dictionary(uniqueKeysWithValues: items.compactMap { product, count in
            byID[product.id].map { ($0, count) }
        })
    }
}
