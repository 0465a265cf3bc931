// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "KaffeeKit",
    defaultLocalization: "de",
    platforms: [.iOS(.v16)],
    products: [
        .library(name: "KaffeeKit", targets: ["KaffeeKit"]),
    ],
    targets: [
        .target(name: "KaffeeKit", path: "Sources/KaffeeKit"),
        .testTarget(name: "KaffeeKitTests", dependencies: ["KaffeeKit"], path: "Tests/KaffeeKitTests"),
    ]
)
