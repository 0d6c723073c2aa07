/// Eight bytes of a JSON string at a time: which of them a reader or a writer must look at
/// one by one (SWAR: the bit tricks of "determine if a word has a zero byte").
package enum StringScan {
    /// The high bit of each byte of `word` that is a quote, a backslash or a control character,
    /// and, when `nonASCII`, of each byte beyond ASCII. The lowest flagged byte is always one
    /// of those: a borrow carries a flag only to higher bytes, after a byte flagged itself.
    package static func specialBytes(_ word: UInt64, nonASCII: Bool) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22), backslashes = word ^ (ones &* 0x5C)
        // A byte below 0x20 borrows; `~word` leaves out the bytes beyond ASCII, `word` keeps them.
        let controls = (word &- ones &* 0x20) & (nonASCII ? ~0 : ~word)
        return (((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes) | controls
            | (nonASCII ? word : 0)) & highs
    }
}
