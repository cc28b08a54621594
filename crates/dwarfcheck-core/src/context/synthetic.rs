//! Deterministic synthetic machine state, so expressions from real binaries
//! can be evaluated with no live process: every register and byte of memory
//! is a fixed function of a seed, the register number or the address.

/// SplitMix64 finaliser: a cheap, well-mixed 64-bit hash.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Bytes `offset..offset+out.len()` of register `regno` (little-endian
/// 8-byte chunks of `mix(seed, regno, chunk)`).
pub fn register_bytes(seed: u64, regno: u64, offset: usize, out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        let pos = offset + i;
        let chunk = mix(seed ^ mix(regno.wrapping_add(1)) ^ (pos / 8) as u64);
        *b = (chunk >> ((pos % 8) * 8)) as u8;
    }
}

/// The byte at `address` of address space `aspace`.
pub fn memory_byte(seed: u64, aspace: u64, address: u64) -> u8 {
    let word = mix(seed ^ mix(aspace.wrapping_add(0x100)) ^ (address & !7));
    (word >> ((address & 7) * 8)) as u8
}
