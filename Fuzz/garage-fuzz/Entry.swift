import Foundation
import GarageFixtureModels
import GarageLite

// Built for libFuzzer (`Fuzz/run.sh`: `-sanitize=fuzzer,address -D GARAGE_LIBFUZZER`), the
// executable is libFuzzer's: it calls `LLVMFuzzerTestOneInput` with each input it makes, for
// the target named by GARAGE_FUZZ_TARGET. Built as usual, it replays inputs:
//
//     swift run garage-fuzz records Fuzz/corpus/records Fuzz/regressions/records
//
// runs every file under those paths through the `records` target, which is how the committed
// corpora and the findings turned into regression inputs are replayed in CI.

#if GARAGE_LIBFUZZER
private let selected: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["GARAGE_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget.named(name) else {
        FileHandle.standardError.write(Data("GARAGE_FUZZ_TARGET must name a target: \(FuzzTarget.all.map(\.name))\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selected.run(bytes)
    return 0
}

/// libFuzzer's driver (its `main` is replaced by SwiftPM's entry point, so this one calls it).
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@main
struct GarageFuzz {
    static func main() {
        _ = selected
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runDriver(&argc, &argv, fuzzOneInput))
    }
}
#else
@main
struct GarageFuzz {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "seed-records", arguments.count == 2 {
            writeRecordSeeds(into: arguments[1])
            return
        }
        guard let name = arguments.first, let target = FuzzTarget.named(name), arguments.count > 1 else {
            print("usage: garage-fuzz TARGET PATH...   (replays every file under the paths through TARGET)")
            print("       garage-fuzz seed-records DIR (writes the records target's seed inputs)")
            for target in FuzzTarget.all { print("  \(target.name): \(target.summary)") }
            exit(2)
        }
        var inputs = 0
        for path in arguments.dropFirst() {
            for file in files(under: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    print("garage-fuzz: can't read \(file)")
                    exit(1)
                }
                target.run(Array(data))
                inputs += 1
            }
        }
        print("garage-fuzz \(target.name): \(inputs) inputs replayed, none crashed")
    }

    /// The records target's seeds: the JSON of each model object as a garage stores it (with
    /// reference stubs), each after the byte that picks its type.
    static func writeRecordSeeds(into directory: String) {
        let garage = RecordsStore.shared.next()
        let typeBytes: [String: UInt8] = ["FuzzParent": 0, "FuzzChild": 1, "FuzzContact": 2]
        do {
            try garage.park(FixtureGarageStorage.Relative(name: "ann", age: 40, siblings: [.init(name: "bo", age: 38)]))
            for record in try garage.records() {
                let typeByte = typeBytes[record.typeName] ?? 3
                let name = "\(record.typeName)-\(record.identifier).json"
                try Data([typeByte] + Array(record.json.utf8)).write(to: URL(fileURLWithPath: directory + "/" + name))
            }
        } catch {
            print("garage-fuzz: \(error)")
            exit(1)
        }
    }

    /// The regular files at or under `path`, sorted.
    static func files(under path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { return [path] }
        let names = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
        return names.sorted().map { path + "/" + $0 }.filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder) && !isFolder.boolValue
        }
    }
}
#endif
