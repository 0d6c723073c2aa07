import Foundation
import Testing
@testable import GarageLite

/// Issue 13, transformers: conversions both ways, chained, and keys whose values are stored as
/// a transformer's output.
@Suite("Settings: transformers")
struct SettingsTransformerTests {
    @Test func rawRepresentableValuesAreTheirRawValues() throws {
        let transformer = RawRepresentableTransformer<STTheme>()
        #expect(transformer.transform(.dark) == 2)
        #expect(try transformer.untransform(1) == .light)
        #expect(throws: TransformerError.noValue(forRawValue: "7", of: "STTheme")) { try transformer.untransform(7) }
    }

    @Test func jsonTransformerRoundTripsAValue() throws {
        let transformer = JSONTransformer<STWindow>()
        let data = try transformer.transform(STWindow(width: 800, height: 600))
        #expect(String(decoding: data, as: UTF8.self) == #"{"height":600,"width":800}"#)
        #expect(try transformer.untransform(data) == STWindow(width: 800, height: 600))
        #expect(throws: DecodingError.self) { try transformer.untransform(Data("[]".utf8)) }
    }

    @Test func chainedTransformersRunInOrderAndUndoInReverse() throws {
        let chain = RawRepresentableTransformer<STTheme>().append(JSONTransformer<Int>())
        let data = try chain.transform(.dark)
        #expect(String(decoding: data, as: UTF8.self) == "2")
        #expect(try chain.untransform(data) == .dark)
        #expect(throws: TransformerError.noValue(forRawValue: "5", of: "STTheme")) { try chain.untransform(Data("5".utf8)) }

        let windowAsSpeed = STWindowText().append(RawRepresentableTransformer<STSpeed>().reversed)
        #expect(throws: TransformerError.self) { try windowAsSpeed.transform(STWindow(width: 1, height: 2)) }
    }

    /// Persist's example: an enumeration stored as its raw value.
    @Test func aKeyWithATransformerStoresItsOutput() throws {
        let garage = try TestEngine.garage()
        let theme = SettingsKey<GlobalSettings, STTheme>(id: "theme", defaultValue: .light, transformer: RawRepresentableTransformer())
        #expect(try garage.value(for: theme) == .light)
        try garage.set(.dark, for: theme)
        #expect(try garage.value(for: theme) == .dark)
        // Stored as the raw Int: a key of that type reads it.
        #expect(try garage.value(for: SettingsKey<GlobalSettings, Int>(id: "theme", defaultValue: 0)) == 2)

        // A raw value that names no case is a mismatch naming the key, not the default.
        try garage.set(9, for: SettingsKey<GlobalSettings, Int>(id: "theme", defaultValue: 0))
        let error = try #require(throws: SettingsError.self) { try garage.value(for: theme) }
        #expect(error == .valueMismatch(key: "theme", valueType: "STTheme", reason: "9 is the raw value of no STTheme"))
    }

    @Test func aKeyWithAChainStoresTheLastOutputAndTheTransformRunsFirst() throws {
        let garage = try TestEngine.garage()
        let window = SettingsKey<GlobalSettings, STWindow>(
            id: "window", defaultValue: STWindow(width: 1, height: 1),
            transformer: STWindowText().append(JSONTransformer<String>())
        ) { STWindow(width: max($0.width, 100), height: max($0.height, 100)) }
        try garage.set(STWindow(width: 20, height: 300), for: window)
        #expect(try garage.value(for: window) == STWindow(width: 100, height: 300))
        let stored = try garage.value(for: SettingsKey<GlobalSettings, Data>(id: "window", defaultValue: Data()))
        #expect(String(decoding: stored, as: UTF8.self) == #""100.0x300.0""#)

        // An optional value through a JSON transformer: nil is stored as JSON null.
        let maybe = SettingsKey<GlobalSettings, STWindow?>(id: "maybe", defaultValue: STWindow(width: 2, height: 2), transformer: JSONTransformer())
        try garage.set(nil, for: maybe)
        #expect(try garage.value(for: maybe) == nil)
        #expect(try garage.removeValue(for: maybe))
        #expect(try garage.value(for: maybe) == STWindow(width: 2, height: 2))
    }

    @Test func aTransformerThatCantTransformStoresNothing() throws {
        let garage = try TestEngine.garage()
        let speed = SettingsKey<GlobalSettings, STSpeed>(id: "speed", defaultValue: .slow, transformer: STSpeedRefusingFast())
        #expect(throws: STSpeedRefusingFast.Refusal.self) { try garage.set(.fast, for: speed) }
        #expect(try garage.count() == 0)
        try garage.set(.slow, for: speed)
        #expect(try garage.value(for: speed) == .slow)
    }
}

/// Stores a speed as its raw value, refusing to store `.fast`.
struct STSpeedRefusingFast: Transformer {
    struct Refusal: Error {}

    func transform(_ value: STSpeed) throws -> String {
        if value == .fast { throw Refusal() }
        return value.rawValue
    }

    func untransform(_ value: String) throws -> STSpeed {
        try RawRepresentableTransformer<STSpeed>().untransform(value)
    }
}

extension RawRepresentableTransformer {
    /// The raw value to the value, the other way round, for a chain that reads a raw value.
    var reversed: STReversed<Self> { STReversed(base: self) }
}

/// A transformer run backwards.
struct STReversed<Base: Transformer>: Transformer {
    let base: Base

    func transform(_ value: Base.Output) throws -> Base.Input { try base.untransform(value) }

    func untransform(_ value: Base.Input) throws -> Base.Output { try base.transform(value) }
}
