// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "GarageLite",
    platforms: [
        .macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v7),
    ],
    products: [
        .library(name: "GarageLite", targets: ["GarageLite"]),
        // The same Garage on PostgreSQL: apps that use only SQLite never build postgres-nio.
        .library(name: "GarageLitePostgres", targets: ["GarageLitePostgres"]),
        // The server half of sync: a SyncServer on a Garage, its Hummingbird routes.
        .library(name: "GarageLiteServer", targets: ["GarageLiteServer"]),
        // The ready HTTP transport a device's SyncEngine uses to reach a SyncServer (URLSession only).
        .library(name: "GarageLiteClient", targets: ["GarageLiteClient"]),
        .executable(name: "garage-demo", targets: ["garage-demo"]),
        .executable(name: "garage", targets: ["garage"]),
        .executable(name: "garage-server", targets: ["garage-server"]),
        .executable(name: "garage-bench", targets: ["garage-bench"]),
        .executable(name: "garage-bench-postgres", targets: ["garage-bench-postgres"]),
        .executable(name: "garage-bench-server", targets: ["garage-bench-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The demo's HTTP server (Sources/garage-demo/DemoServer.swift), and what stops it gracefully
        // (a Hummingbird dependency already); the library uses neither. On Linux only: Hummingbird
        // needs macOS 11, and this package supports macOS 10.15 (elsewhere the demo's devices call
        // its server in the process).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The PostgreSQL engine (Sources/GarageLitePostgres), and the log its client wants.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // The sync server's tokens (Sources/GarageLiteServer/SyncTokens.swift): JWTs, HS256 and
        // key sets. On Linux only, as Hummingbird: it needs macOS 13.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // The sync server's metrics (swift-metrics), and the Prometheus text its route and
        // garage-server expose.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The sync server bench's latency percentiles (Benchmarks/garage-bench-server).
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        // The GarageLite product is three targets; apps `import GarageLite`, which re-exports the core.
        // The core: the values every layer names (keys, errors, statuses, queries, reports), the
        // coders and JSON, and the engine boundary (`Engine/`: what a database must do, the rules
        // of the rows once, and the defaults built on them). No database here.
        .target(
            name: "GarageLiteCore",
            dependencies: [
                // SHA-256, for the identifiers derived from a value (Identity/).
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The SQLite engine: the only target that imports GRDB, and the only SQL of the device's store.
        .target(
            name: "GarageLiteSQLite",
            dependencies: [
                "GarageLiteCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API: the hot statements that run on its handle (SQLiteConnection.swift), and
                // the header read before opening a store (StoreFile.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // The façade: `Garage`, its store and operations, observation, encryption, settings, sync.
        .target(
            name: "GarageLite",
            dependencies: [
                "GarageLiteCore",
                "GarageLiteSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                // PBKDF2, for a store locked with a passphrase (Encryption/Keyring.swift).
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The PostgreSQL engine: `Garage(postgres:schema:)`, the same rows and rules on a server database.
        .target(
            name: "GarageLitePostgres",
            dependencies: [
                "GarageLite",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The server half of sync (SyncServer): versions, conflicts, a feed per scope, rules in Swift.
        .target(
            name: "GarageLiteServer",
            dependencies: [
                "GarageLite",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(platforms: [.linux])),
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(platforms: [.linux])),
                // The live route ends its event streams when the server shuts down gracefully.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(platforms: [.linux])),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The device's ready transport to a SyncServer's routes.
        .target(
            name: "GarageLiteClient",
            dependencies: ["GarageLite"]
        ),
        // Two devices sync notes with a SyncEngine over HTTP, with a server on loopback: `swift run garage-demo`.
        .executableTarget(
            name: "garage-demo",
            dependencies: [
                "GarageLite",
                "GarageLitePostgres",
                "GarageLiteServer",
                "GarageLiteClient",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(platforms: [.linux])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(platforms: [.linux])),
            ]
        ),
        // The ready sync server: a store's types as records, behind JWTs, with no Swift code:
        // `swift run garage-server --help`.
        .executableTarget(
            name: "garage-server",
            dependencies: [
                "GarageLite",
                "GarageLitePostgres",
                "GarageLiteServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(platforms: [.linux])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(platforms: [.linux])),
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(platforms: [.linux])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command-line tool that looks inside, checks, repairs and moves a store: `swift run garage --help`.
        // The garage tool's parsers (`--where` expressions, export and import lines), in a
        // library of their own so that the fuzzer reaches them too.
        .target(
            name: "GarageToolSupport",
            dependencies: ["GarageLite"]
        ),
        .executableTarget(
            name: "garage",
            dependencies: [
                "GarageLite",
                "GarageToolSupport",
                "GarageLitePostgres",
                // `garage sync-server`: a sync server's scopes, tombstones and rebases.
                "GarageLiteServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Benchmarks GarageLite against raw SQLite and plain GRDB records: `swift run -c release garage-bench --quick`.
        .executableTarget(
            name: "garage-bench",
            dependencies: [
                "GarageLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/garage-bench"
        ),
        // Benchmarks the PostgreSQL engine against postgres-nio with hand-written statements on the same
        // schema, and claims with 1 to 8 worker processes: `swift run -c release garage-bench-postgres URL`.
        .executableTarget(
            name: "garage-bench-postgres",
            dependencies: [
                "GarageLite",
                "GarageLitePostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/garage-bench-postgres"
        ),
        // Benchmarks the sync server on loopback: uploads at 1 and 3 instances, a fresh device's
        // download, a first sync among 10,000 scopes, an edit's trip: `swift run -c release garage-bench-server`.
        .executableTarget(
            name: "garage-bench-server",
            dependencies: [
                "GarageLite",
                "GarageLitePostgres",
                "GarageLiteServer",
                "GarageLiteClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(platforms: [.linux])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(platforms: [.linux])),
            ],
            path: "Benchmarks/garage-bench-server"
        ),
        // Runs one side of the cross-process stress test; the tests launch it.
        .executableTarget(
            name: "garage-stress-worker",
            dependencies: [
                "GarageLite", "GarageLitePostgres", "GarageLiteClient", "GarageStressModels", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The types the stress worker parks and the cross-process tests read, and where the
        // store a test names by path lives in every process (TestStores).
        .target(
            name: "GarageStressModels",
            dependencies: ["GarageLite", "GarageLitePostgres", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The types stored in the golden store files of Fixtures/: garage-fixtures writes them, the tests read them.
        .target(
            name: "GarageFixtureModels",
            dependencies: ["GarageLite"],
            path: "Fixtures/models"
        ),
        // Regenerates the golden store files in Fixtures/: `swift run garage-fixtures Fixtures`.
        .executableTarget(
            name: "garage-fixtures",
            dependencies: [
                "GarageLite",
                "GarageFixtureModels",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Fixtures/generator"
        ),
        // Coverage-guided fuzzing (Fuzz/README.md): libFuzzer's targets when built by
        // Fuzz/run.sh, a replayer of inputs otherwise.
        .executableTarget(
            name: "garage-fuzz",
            dependencies: [
                "GarageLite", "GarageFixtureModels", "GarageToolSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Fuzz/garage-fuzz"
        ),
        // The tests' fault-injecting file system for SQLite (power cuts, I/O errors): test-only.
        .target(
            name: "FaultVFS",
            dependencies: [.product(name: "GRDBSQLite", package: "GRDB.swift")],
            path: "Tests/FaultVFS"
        ),
        .testTarget(
            name: "GarageLiteTests",
            dependencies: [
                "GarageLite",
                "GarageLiteCore",
                "GarageLiteSQLite",
                "FaultVFS",
                "GarageLitePostgres",
                "GarageLiteServer",
                "GarageLiteClient",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(platforms: [.linux])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(platforms: [.linux])),
                "GarageFixtureModels",
                "GarageStressModels",
                "garage-stress-worker",
                "garage",
                "garage-server",
                "garage-fuzz",
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(platforms: [.linux])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(platforms: [.linux])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
