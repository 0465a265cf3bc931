import UIKit

/// Checkout screen: shows the cart total and hands payment to the web view.
final class CheckoutViewController: UIViewController {
    private let cart: CartStore
    private let language: String
    private let totalLabel = UILabel()
    private let payButton = UIButton(type: .system)
    private var isPaying = false

    init(cart: CartStore, language: String = Locale.current.language.languageCode?.identifier ?? "de") {
        self.cart = cart
        self.language = language
        super.init(nibName: nil, bundle: nil)
    }

    @available(*, unavailable)
    required init?(coder: NSCoder) { fatalError("init(coder:) is not supported") }

    override func viewDidLoad() {
        super.viewDidLoad()
        title = L10n.string("checkout.title", language: language)
        payButton.setTitle(L10n.string("checkout.pay", language: language), for: .normal)
        payButton.addTarget(self, action: #selector(pay), for: .touchUpInside)
        cart.observeTotal { [weak self] total in
            self?.render(total: total)
        }
    }

    private func render(total: Int) {
        let formatter = NumberFormatter()
        formatter.numberStyle = .currency
        formatter.currencyCode = "EUR"
        let amount = formatter.string(from: NSNumber(value: Double(total) / 100)) ?? "-"
        totalLabel.text = "\(L10n.string("checkout.total", language: language)): \(amount)"
    }

    @objc private func pay() {
        // The isPaying flag is our guard against a second tap while the sheet opens.
        guard !isPaying else {
            return
        }
        guard cart.total > 0,
              let url = URL(string: "https://shop.kaffeekontor.de/checkout?lang=\(language)")
        else {
            showError(L10n.string("cart.empty", language: language))
            return
        }
        isPaying = true
        let payment = PaymentSheet(url: url) { [weak self] succeeded in
            self?.isPaying = false
            if succeeded { self?.navigationController?.popToRootViewController(animated: true) }
        }
        present(payment, animated: true)
    }

    private func showError(_ message: String) {
        let alert = UIAlertController(title: nil, message: message, preferredStyle: .alert)
        alert.addAction(UIAlertAction(title: "OK", style: .default))
        present(alert, animated: true)
    }
}
