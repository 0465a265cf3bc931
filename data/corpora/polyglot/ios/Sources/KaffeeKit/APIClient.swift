import Foundation

public enum APIError: Error, Equatable {
    case badURL(String)
    case status(Int)
    case decoding
}

/// Talks to the shop API. Completion handlers run on the main queue.
public final class APIClient {
    private let base: URL
    private let session: URLSession
    private var inFlight: [String: URLSessionDataTask] = [:]

    public init(base: URL, session: URLSession = .shared) {
        self.base = base
        self.session = session
    }

    public func fetchProducts(locale: String, completion: @escaping (Result<[Product], APIError>) -> Void) {
        guard let url = URL(string: "products?locale=\(locale)", relativeTo: base) else {
            completion(.failure(.badURL("products")))
            return
        }
        let key = url.absoluteString
        // One request per URL: guard against double taps on "reload".
        if inFlight[key] != nil { return }
        let task = session.dataTask(with: url) { [weak self] data, response, _ in
            DispatchQueue.main.async {
                self?.inFlight[key] = nil
                guard
                    let http = response as? HTTPURLResponse,
                    (200..<300).contains(http.statusCode)
                else {
                    completion(.failure(.status((response as? HTTPURLResponse)?.statusCode ?? -1)))
                    return
                }
                guard let data, let products = try? JSONDecoder().decode([Product].self, from: data) else {
                    completion(.failure(.decoding))
                    return
                }
                completion(.success(products))
            }
        }
        inFlight[key] = task
        task.resume()
    }

    public func cancelAll() {
        inFlight.values.forEach { $0.cancel() }
        inFlight.removeAll()
    }
}
